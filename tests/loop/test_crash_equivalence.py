"""Crash equivalence: `assay evolve` killed after its k-th event (or in the middle of writing a line of any file
the loop appends to) and resumed ends exactly as the same run uninterrupted: the same generations, decisions,
candidate trees and dev scores, the same stop reason, the same case runs spent, and every view complete."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from assay.history.runfiles import RunFiles
from assay.history.store import RunStore
from assay.loop.events import Decided, Event, Finished, typed_events

from .conftest import git, make_project

pytestmark = pytest.mark.e2e

GENERATIONS = 6
# A resumed run must make the reference's decisions, so timing must not decide: on a busy machine a case can
# take twice the baseline's time, and the ratchet's time rule would discard what the reference kept.
UNTIMED = "  gate_options: {cost_factor: 1000}\n"
# Seeds 4 and 3: runs that keep and discard within their generations (on seed 0 today's search discards all six;
# which seed does depends on the operators, so a change to them may call for another).
GREEDY = (
    "evolve:\n  discards_per_layer: 2\n  target_pass_rate: null\n  stop_on_oscillation: false\n  l3_every: 3\n"
    "  seed: 4\n" + UNTIMED
)
TREND = (
    "evolve:\n  gate: trend\n  gate_options: {min_delta: 0.02, max_retries: 1}\n  target_pass_rate: null\n"
    "  stop_on_oscillation: false\n  seed: 4\n"
)
PIPELINE = (
    "evolve:\n  search: ranked\n  pipeline: 3\n  target_pass_rate: null\n  stop_on_oscillation: false\n"
    "  seed: 3\n  tournament: {opponents: adaptive, k: 2, rating: bradley_terry}\n" + UNTIMED
)


@dataclass
class Ended:
    """What a run ended with, as comparable data."""

    decisions: list[tuple[int, str, str | None, float | None, tuple[str, ...], str]]
    stop_reason: str
    case_runs: int
    kinds: list[str]


def assay(root: Path, *args: str, fault: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_FAULT"} | (
        {"ASSAY_FAULT": fault} if fault else {}
    )
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )


def tree(root: Path, commit: str | None) -> str | None:
    return git(root, "rev-parse", f"{commit}^{{tree}}") if commit else None


def ended(root: Path) -> Ended:
    run_dir = next((root / ".assay" / "runs").iterdir())
    files = RunFiles(run_dir)
    events: list[Event] = typed_events(files.read_events())
    decided = [e.record for e in events if isinstance(e, Decided)]
    finished = [e for e in events if isinstance(e, Finished)]
    assert len(finished) == 1, [type(e).__name__ for e in events]
    # Every view holds exactly the decided candidates.
    ids = [r.candidate_id for r in decided]
    assert [r.candidate_id for r in files.read_candidates()] == ids
    assert [row["candidate"] for row in files.read_results_tsv()] == ids
    store = RunStore(f"sqlite:///{root / '.assay' / 'assay.db'}")
    assert [r.candidate_id for r in store.candidates(run_dir.name)] == ids
    assert [e.seq for e in store.events(run_dir.name)] == [e.seq for e in files.read_events()]
    assert store.get_run(run_dir.name).status == "finished"
    # Every candidate commit carries its reason as its note, a resumed generation's too.
    for record in decided[1:]:
        if record.commit:
            assert git(root, "notes", "show", record.commit) == f"reason: {record.reason}", (
                record.candidate_id
            )
    return Ended(
        decisions=[
            (r.generation, r.decision, tree(root, r.commit), r.dev_score, tuple(sorted(r.flags)), r.reason)
            for r in decided
        ],
        stop_reason=finished[0].reason,
        case_runs=sum(e.spent.case_runs for e in events),
        kinds=[type(e).__name__ for e in events],
    )


def project(tmp_path: Path, name: str, extra: str, items: int) -> Path:
    return make_project(tmp_path / name, cases=5, items=items, extra=extra)


def crash_and_resume(root: Path, fault: str) -> Ended:
    killed = assay(root, "evolve", "-n", str(GENERATIONS), fault=fault)
    assert killed.returncode == -9, f"{fault}: the fault never fired ({killed.stderr[-500:]})"
    for _ in range(3):
        resumed = assay(root, "resume", "-n", str(GENERATIONS))
        if resumed.returncode == 0:
            return ended(root)
        assert "no run to resume" not in resumed.stderr, resumed.stderr
    raise AssertionError(f"{fault}: resume did not finish: {resumed.stderr[-1000:]}")


def faults_for(reference: Ended, kinds: set[str] | None, *, ahead: bool = False) -> list[str]:
    """Kill points spread over every kind of event (or those of ``kinds``: its first and a later occurrence),
    and a torn line in each file the loop appends to. With proposals made ahead, how many are made before the
    run stops depends on timing, so the last events' numbers move: they are left out."""
    chosen: dict[str, list[int]] = {}
    last = len(reference.kinds) - (3 if ahead else 0)
    for index, kind in enumerate(reference.kinds[:last], start=1):
        if kinds is None or kind in kinds:
            chosen.setdefault(kind, []).append(index)
    kills = {seqs[0] for seqs in chosen.values()}
    kills |= {
        seqs[len(seqs) // 2] for kind, seqs in chosen.items() if kind in ("Committed", "Measured", "Decided")
    }
    kills = sorted(kills)
    torn = ["events.ndjson:9:torn", "experiments.jsonl:3:torn", "results.tsv:4:torn"]
    return [f"events.ndjson:{k}:kill" for k in kills] + torn


@pytest.mark.parametrize(
    ("extra", "items", "kinds"),
    [
        (GREEDY, 60, None),  # enough items for the offline default to keep and discard in 6 generations
        (PIPELINE, 30, None),
        # The trend gate remembers retries and recent scores between decisions.
        (TREND, 30, {"Committed", "Measured", "Decided"}),
    ],
    ids=["greedy", "ranked-pipeline", "trend-gate"],
)
def test_a_run_killed_anywhere_and_resumed_is_the_same_run(
    tmp_path: Path, extra: str, items: int, kinds: set[str] | None
) -> None:
    reference_root = project(tmp_path, "reference", extra, items)
    done = assay(reference_root, "evolve", "-n", str(GENERATIONS))
    assert done.returncode == 0, done.stderr
    reference = ended(reference_root)
    assert len(reference.decisions) == GENERATIONS + 1
    assert {d[1] for d in reference.decisions} >= {"keep", "discard"}  # a run with something to decide
    faults = faults_for(reference, kinds, ahead="pipeline" in extra)
    roots = [project(tmp_path, f"crash-{number}", extra, items) for number in range(len(faults))]
    with ThreadPoolExecutor(max_workers=2) as pool:  # each scenario is its own processes and repository
        results = list(pool.map(crash_and_resume, roots, faults))
    for fault, again in zip(faults, results, strict=True):
        assert again.decisions == reference.decisions, fault
        assert again.stop_reason == reference.stop_reason, fault
        assert again.case_runs == reference.case_runs, fault  # budgets carry across resumes
