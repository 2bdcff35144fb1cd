"""The loop on noise: an llm runner whose scripted server answers at random with fixed per-case pass
probabilities. The baseline is run three times per dev case, flaky cases are listed in plan.md, the gate becomes
the paired sequential test, its extra runs are logged and counted, and a change that does nothing is not kept
while a real gain is."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from assay.aio import run_sync
from assay.config import load_config
from assay.history.records import CandidateRecord
from assay.history.runfiles import RunFiles
from assay.loop.engine import Evolution
from assay.stats import estimate_noise
from tests.fakes.llm_server import ScriptedLLMServer

from .conftest import git

pytestmark = pytest.mark.e2e

CASES = 14
HARMFUL = "Answer at random when unsure."


def pass_probability(case: int, system: str) -> float:
    """Half the cases are near-deterministic, half flaky; without the harmful line every flaky case gains."""
    base = (0.97, 0.03)[case % 2] if case < CASES // 2 else 0.2 + 0.05 * (case % 7)
    gain = 0.4 if case >= CASES // 2 and HARMFUL not in system else 0.0
    return min(1.0, base + gain)


def noisy_reply(seed: int) -> Any:
    """Answers YES with the case's pass probability. The k-th request with the same prompt gets the k-th draw
    of a hash-seeded stream, so the runs of a prompt are the same whatever order concurrent requests come in."""
    seen: dict[tuple[str, str], int] = {}
    lock = threading.Lock()

    def reply(body: dict[str, Any]) -> str:
        system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
        user = body["messages"][-1]["content"]
        with lock:
            k = seen[(system, user)] = seen.get((system, user), -1) + 1
        digest = hashlib.sha256(f"{seed}|{system}|{user}|{k}".encode()).hexdigest()
        draw = int(digest[:8], 16) / 2**32
        case = int(re.search(r"question (\d+)", user).group(1))
        return "YES indeed" if draw < pass_probability(case, system) else "no idea"

    return reply


def write_project(root: Path, url: str, prompt: str) -> Path:
    root.mkdir(parents=True)
    (root / "prompt.md").write_text(prompt)
    (root / "cases.yaml").write_text(
        "cases:\n" + "".join(f"  - {{id: q{i:02d}, input: 'question {i}'}}\n" for i in range(CASES))
    )
    (root / "assay.yaml").write_text(
        "artifact: {kind: prompt, paths: [prompt.md], forbid: [cases.yaml, assay.yaml]}\n"
        "cases: {files: [cases.yaml]}\n"
        f"runner: {{type: llm, model: 'openai:noisy', base_url: '{url}', max_retries: 0, timeout: 20}}\n"
        "checks:\n  - {type: contains, value: 'YES'}\n"
        "evolve: {target_pass_rate: null, plateau: null, stop_on_oscillation: false, tournament: {enabled: false},\n"
        # Only the noise may decide here, not a busy machine's timing (the time rule would discard a real gain).
        "         gate_options: {cost_factor: 1000}}\n"
    )
    (root / ".gitignore").write_text(".assay/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    return root


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def progress_numbers(record: CandidateRecord) -> dict[str, Any]:
    progress = record.gate.get("progress")
    return progress.numbers if progress else {}


def run(root: Path, generations: int):
    outcome = run_sync(Evolution(load_config(root / "assay.yaml"), max_generations=generations).start())
    files = RunFiles(root / ".assay" / "runs" / outcome.run_id)
    return outcome, files


def test_noise_is_measured_and_the_paired_gate_keeps_only_real_gains(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.default = noisy_reply(seed=7)
    root = write_project(tmp_path / "p", llm_server.openai_url, f"{HARMFUL} Be brief.\n")
    outcome, files = run(root, generations=6)

    events = files.read_events()
    noise = next(e.data for e in events if e.kind == "noise")
    estimate = estimate_noise(noise["runs"])
    assert noise["runs_per_case"] == 3 and not estimate.deterministic
    saved = json.loads((files.run_dir / "noise.json").read_text())
    assert saved["runs"] == noise["runs"]
    dev_ids = set(saved["runs"])
    assert all(len(runs) == 3 for runs in saved["runs"].values())
    assert set(estimate.flaky) <= dev_ids and estimate.flaky
    plan = (files.run_dir / "plan.md").read_text()
    assert "noise at the baseline: noisy:" in plan and "paired sequential test" in plan
    assert all(cid in plan for cid in estimate.flaky)

    records = files.read_candidates()
    baseline_runs = 3 * len(dev_ids)
    assert records[0].tokens > 0
    evaluated = [r for r in records[1:] if r.dev_score is not None]
    assert evaluated
    for record in evaluated:
        progress = progress_numbers(record)
        assert progress["decision"] in ("better", "worse", "undecided")
        assert 0.0 <= progress["p_better"] <= 1.0 and len(progress["ci"]) == 2
        # Every dev case is in the test but those the best had failed 5+ generations in a row (unfixable).
        assert dev_ids - set(outcome.suspects) <= set(progress["runs"]) <= dev_ids
        assert all(r["parent"] >= 1 and r["candidate"] >= 1 for r in progress["runs"].values())
        assert record.gate["progress"].passed == (progress["decision"] == "better")
        kept_harmful = record.decision == "keep" and HARMFUL in git(
            root, "show", f"{record.commit}:prompt.md"
        )
        assert not kept_harmful, "a change that keeps the harmful line does nothing and must not be kept"
    decided = {e.data["record"]["commit"]: e.data for e in events if e.kind == "decided"}
    for record in evaluated:
        logged = decided[record.commit]
        assert (
            logged["record"]["gate"]["progress"]["numbers"]["p_better"]
            == progress_numbers(record)["p_better"]
        )
        # The runs the paired test added on each side are in the decision, for the fold to keep.
        added = logged["extra_runs"]
        assert (
            sum(map(len, added["on_candidate"].values())) == progress_numbers(record)["extra_candidate_runs"]
        )
    extra = sum(
        progress_numbers(r)["extra_parent_runs"] + progress_numbers(r)["extra_candidate_runs"]
        for r in evaluated
    )
    # Every run is counted: the baseline's three, one per evaluated candidate, the gate's extra runs, and L3
    # (holdout + regression) runs at the baseline, when due and at the end.
    l3 = outcome.case_runs - baseline_runs - len(evaluated) * len(dev_ids) - extra
    assert l3 > 0 and l3 % (CASES - len(dev_ids)) == 0
    assert l3 // (CASES - len(dev_ids)) <= len(evaluated) + 2
    # Removing the harmful line is a +0.4 gain on the seven flaky cases: the first candidate that did it must be
    # found better and kept. Every later change only rewords (no effect) or brings the line back (worse): none
    # may be kept.
    texts = [git(root, "show", f"{r.commit}:prompt.md") for r in evaluated]
    first = next(i for i, text in enumerate(texts) if HARMFUL not in text)
    gain = evaluated[first]
    assert progress_numbers(gain)["decision"] == "better", gain.gate["progress"].detail
    assert gain.decision == "keep", {name: (d.passed, d.detail) for name, d in gain.gate.items()}
    assert all(r.decision != "keep" for r in evaluated[first + 1 :])
    assert records[0].dev_pass_rate < gain.dev_pass_rate or progress_numbers(gain)["effect"] > 0

    env = {**os.environ, "COLUMNS": "250"}
    status = subprocess.run(
        [sys.executable, "-m", "assay", "status"], cwd=root, env=env, capture_output=True, text=True
    )
    assert status.returncode == 0 and "noise at the baseline: noisy:" in status.stdout
    log = subprocess.run(
        [sys.executable, "-m", "assay", "log"], cwd=root, env=env, capture_output=True, text=True
    )
    assert log.returncode == 0 and "paired test" in log.stdout
    assert re.search(r"better \+0\.\d+ \[", log.stdout) and "undecided" in log.stdout


def test_a_deterministic_llm_keeps_one_run_and_the_strict_rule(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.default = lambda body: "YES" if "question 1" in body["messages"][-1]["content"] else "no"
    root = write_project(tmp_path / "p", llm_server.openai_url, "You answer questions.\n\nBe brief.\n")
    _, files = run(root, generations=2)
    noise = next(e.data for e in files.read_events() if e.kind == "noise")
    estimate = estimate_noise(noise["runs"])
    assert noise["runs_per_case"] == 3 and estimate.deterministic and estimate.flaky == []
    plan = (files.run_dir / "plan.md").read_text()
    assert "deterministic: all" in plan and "no PASS->FAIL regression" in plan
    evaluated = [r for r in files.read_candidates()[1:] if r.dev_score is not None]
    assert evaluated
    for record in evaluated:
        assert "p_better" not in progress_numbers(record)


def test_a_resumed_noisy_run_keeps_its_baseline_runs_and_its_gate(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.default = noisy_reply(seed=3)
    root = write_project(tmp_path / "p", llm_server.openai_url, f"{HARMFUL} Be brief.\n")
    evolution = Evolution(load_config(root / "assay.yaml"), max_generations=4)
    gens: list[str] = []

    def report(line: str) -> None:
        gens.append(line)
        if sum(g.startswith("gen") for g in gens) == 2:
            next((root / ".assay" / "runs").iterdir()).joinpath("STOP").write_text("")

    evolution.report = report
    first = run_sync(evolution.start())
    assert first.stop_reason == "STOP file found" and first.generations == 2
    files = RunFiles(root / ".assay" / "runs" / first.run_id)
    saved = (files.run_dir / "noise.json").read_text()
    (files.run_dir / "STOP").unlink()
    requests_before = len(llm_server.requests)

    second = run_sync(Evolution(load_config(root / "assay.yaml"), max_generations=4).resume(first.run_id))
    assert second.run_id == first.run_id and second.generations == 4
    assert (files.run_dir / "noise.json").read_text() == saved  # the baseline was not measured again
    assert [e.kind for e in files.read_events()].count("noise") == 1
    records = files.read_candidates()
    assert [r.generation for r in records] == [0, 1, 2, 3, 4]
    for record in records[3:]:
        if record.dev_score is not None:
            assert "p_better" in progress_numbers(record)  # still the paired gate
    assert len(llm_server.requests) > requests_before


def test_the_gates_extra_runs_keep_to_the_configured_concurrency(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    inner = noisy_reply(seed=5)
    lock = threading.Lock()
    flight = {"now": 0, "max": 0}

    def reply(body: dict[str, Any]) -> str:
        with lock:
            flight["now"] += 1
            flight["max"] = max(flight["max"], flight["now"])
        try:
            time.sleep(0.01)  # long enough for concurrent requests to overlap
            return inner(body)
        finally:
            with lock:
                flight["now"] -= 1

    llm_server.default = reply
    root = write_project(tmp_path / "p", llm_server.openai_url, f"{HARMFUL} Be brief.\n")
    (root / "assay.yaml").write_text((root / "assay.yaml").read_text() + "concurrency: 2\n")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two at a time")
    _, files = run(root, generations=2)
    extra = [
        progress_numbers(r)["extra_candidate_runs"]
        for r in files.read_candidates()[1:]
        if "p_better" in progress_numbers(r)
    ]
    assert sum(extra) > 0  # the paired test did ask for more runs
    assert flight["max"] == 2


async def test_strict_reruns_draw_fresh_samples_even_with_the_cache_on(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    from assay.evaluation.session import select_cases
    from assay.loop.measure import Measurer
    from assay.model import Split

    llm_server.add_rule(["YES", "no", "YES", "no"])  # served in turn: a cached answer would repeat "YES"
    root = write_project(tmp_path / "p", llm_server.openai_url, "Be brief.\n")
    config = load_config(root / "assay.yaml")
    selection = select_cases(config, "all")
    cases = {s: [c for c, cs in selection.cases if cs == s] for s in Split}
    measurer = Measurer(config, cases, use_cache=True)
    try:
        case_id = cases[Split.DEV][0].id
        first = await measurer.run_case(case_id, root, run_index=0)
        again = await measurer.run_case(case_id, root, run_index=0)
        assert first.passed and again.passed and len(llm_server.requests) == 1  # run 0 is cached
        assert await measurer.rerun(case_id, 3, root) == 1  # runs 1-3: "no", "YES", "no"
        assert len(llm_server.requests) == 4
    finally:
        await measurer.aclose()
