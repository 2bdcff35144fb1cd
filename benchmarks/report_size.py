"""How big and how slow is `assay report` for a long run? Target: at most 2 MB for a 100-generation run.

The worst case for size is a run whose outputs are long and whose verdicts keep changing: an `llm` runner (the
scripted OpenAI-compatible server on loopback) answering every case with about 1,500 characters, passing or
failing by a hash of the prompt and the case, so every candidate changes some verdicts; 30 cases; the offline
`mutate` proposer; no stop rule but the generation count; a tournament each generation. The report is built
from the run's files as `assay report` builds it; the baseline is reading and folding the same events alone
(what `assay resume` does before it continues), so the ratio is what the report adds. Two scenarios: the
default ratchet gate, and a gate that keeps every candidate (each kept candidate shows all of its outputs).

Run: python benchmarks/report_size.py [--generations 100] [--cases 30] [--output-chars 1500] [--gate both]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.fakes.llm_server

from tests.fakes.llm_server import ScriptedLLMServer  # noqa: E402

from assay.aio import run_sync  # noqa: E402
from assay.config import load_config  # noqa: E402
from assay.gates.base import Gate, GateDecision, GateInput  # noqa: E402
from assay.history.runfiles import read_events  # noqa: E402
from assay.loop.engine import Evolution  # noqa: E402
from assay.loop.events import typed_events  # noqa: E402
from assay.loop.state import LoopState, fold  # noqa: E402
from assay.model import Dimension  # noqa: E402
from assay.report import render_run, run_report  # noqa: E402

CAP = 2 * 1024 * 1024
WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "while",
    "assay",
    "measures",
    "every",
    "case",
    "twice",
]


def reply(output_chars: int) -> Any:
    def answer(body: dict[str, Any]) -> str:
        system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
        user = body["messages"][-1]["content"]
        digest = hashlib.sha256(f"{system}|{user}".encode()).digest()
        # Longer prompts pass more cases: candidates that add text tend to be kept, so the run keeps many (each
        # kept candidate shows all of its outputs: the worst case for size).
        # (A case's draw depends on the case alone, so a longer prompt never turns a pass into a failure.)
        draw = hashlib.sha256(user.encode()).digest()[0]
        verdict = "YES" if draw < min(250, 2 * len(system) - 60) else "NO"
        words = [WORDS[b % len(WORDS)] for b in digest * (output_chars // 150 + 1)]
        return (verdict + " " + " ".join(words))[:output_chars]

    return answer


class KeepAll(Gate):
    """Keeps every candidate: each then shows all of its outputs (the worst case for the report's size)."""

    name = "keep-all"

    async def decide(self, data: GateInput) -> GateDecision:
        return GateDecision(
            keep=True, dimensions={"all": Dimension(passed=True, detail="kept")}, action="keep"
        )


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def make_project(root: Path, url: str, cases: int, generations: int) -> Path:
    root.mkdir(parents=True)
    (root / "prompt.md").write_text(
        "You answer questions about packing.\n\nBe brief and clear.\n\nSay YES when the answer is yes.\n"
    )
    (root / "cases.yaml").write_text(
        "cases:\n"
        + "".join(f"  - {{id: q{i:02d}, input: 'question {i}: is it so?'}}\n" for i in range(cases))
    )
    (root / "assay.yaml").write_text(
        "artifact: {kind: prompt, paths: [prompt.md], forbid: [cases.yaml, assay.yaml]}\n"
        "cases: {files: [cases.yaml]}\n"
        f"runner: {{type: llm, model: 'openai:scripted', base_url: '{url}', max_retries: 0, timeout: 20}}\n"
        "checks:\n  - {type: contains, value: 'YES'}\n"
        f"evolve: {{max_generations: {generations}, wall_clock_s: 86400, target_pass_rate: null, plateau: 1000,"
        " stop_on_oscillation: false, discards_per_layer: 1000, noise: {baseline_runs: 1}}\n"
    )
    (root / ".gitignore").write_text(".assay/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "start")
    return root


def measure(args: argparse.Namespace, gate: Gate | None, label: str) -> int:
    """Run one scenario and print its figures; return the report's size in bytes."""
    with tempfile.TemporaryDirectory(prefix="assay-report-size-") as tmp, ScriptedLLMServer() as server:
        server.default = reply(args.output_chars)
        root = make_project(Path(tmp) / "p", server.openai_url, args.cases, args.generations)
        config = load_config(root / "assay.yaml")
        started = time.perf_counter()
        outcome = run_sync(Evolution(config, max_generations=args.generations, gate=gate).start())
        run_seconds = time.perf_counter() - started
        run_dir = config.data_path / "runs" / outcome.run_id

        started = time.perf_counter()
        events = typed_events(read_events(run_dir))
        fold(LoopState.new(keep_all_measurements=True), events)
        fold_seconds = time.perf_counter() - started

        started = time.perf_counter()
        report = run_report(config, outcome.run_id)
        html = render_run(report)
        build_seconds = time.perf_counter() - started
        size = len(html.encode())
        if os.environ.get("REPORT_SIZE_KEEP"):
            Path(os.environ["REPORT_SIZE_KEEP"]).write_text(html)
        events_size = (run_dir / "events.ndjson").stat().st_size

    print(
        f"{label}: {outcome.generations} generations, {len(report.nodes)} candidates ({len(report.kept)} kept),"
        f" {args.cases} cases, outputs of {args.output_chars} characters; {run_seconds:.1f}s;"
        f" stopped: {outcome.stop_reason}"
    )
    print(f"  events.ndjson            {events_size / 1024:10.0f} KiB")
    print(
        f"  report                   {size / 1024:10.0f} KiB  ({size / CAP:.2f} x the 2 MB cap; target <= 1.00)"
    )
    print(f"  fold the events (base)   {fold_seconds:10.2f} s")
    print(
        f"  build + render report    {build_seconds:10.2f} s  ({build_seconds / fold_seconds:.1f} x the fold)"
    )
    return size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--generations", type=int, default=100)
    parser.add_argument("--cases", type=int, default=30)
    parser.add_argument("--output-chars", type=int, default=1500)
    parser.add_argument("--gate", choices=("ratchet", "keep-all", "both"), default="both")
    args = parser.parse_args()
    sizes = []
    if args.gate in ("ratchet", "both"):
        sizes.append(measure(args, None, "ratchet gate"))
    if args.gate in ("keep-all", "both"):
        sizes.append(measure(args, KeepAll(), "every candidate kept"))
    if max(sizes) > CAP:
        sys.exit(f"a report is over the cap: {max(sizes)} bytes")


if __name__ == "__main__":
    main()
