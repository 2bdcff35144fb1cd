"""Records tests/loop/data/run-v2.tar.gz: a project whose run was written by assay before loop state was split
into owned parts (commit d991fbd), killed after its 60th event, and run-v2.fold.json: what that assay's fold
of the events was, after each event (a hash) and at the end (in full), for tests/loop/test_recorded_run.py.

Run from the repository root with the source of d991fbd: ``PYTHONPATH=src python tests/loop/data/record_run_v2.py``
(``--fold-only``: only the fold, of the run already in the tarball). The run uses the ranked search with
proposals made ahead, the tournament and the trend gate (whose retries flag candidates), so its events hold
every kind the loop writes but ``picked``, ``dropped``, ``interrupted`` and ``finished``."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[3]))

from tests.loop.conftest import make_project

EXTRA = (
    "evolve:\n  search: ranked\n  pipeline: 3\n  gate: trend\n  gate_options: {min_delta: 0.02, max_retries: 1}\n"
    "  target_pass_rate: null\n  stop_on_oscillation: false\n  discards_per_layer: 2\n  l3_every: 2\n"
    "  tournament: {opponents: adaptive, k: 2, rating: bradley_terry}\n"
)
KILL_AFTER = 60


HERE = Path(__file__).parent


def summary(state: Any) -> dict[str, Any]:
    """The fold as comparable data, in the state's layout before the split (one flat LoopState)."""
    best, retry = state.best, state.retry
    return {
        "generation": state.generation,
        "records": [r.model_dump(mode="json", exclude={"time"}) for r in state.records],
        "baseline": state.baseline.record.candidate_id if state.baseline else None,
        "best": best.record.candidate_id if best else None,
        "best_measurement": [best.measurement.dev is not None, best.measurement.holdout is not None]
        if best
        else None,
        "best_tournament_score": state.best_tournament_score,
        "measured": sorted(state.measurements),
        "sizes": state.sizes,
        "archive": [
            [n.id, n.parent, n.accuracy, n.children, n.visits, n.bt_rank] for n in state.archive.nodes()
        ],
        "ratings": {k: [v.rating, v.uncertainty] for k, v in state.ratings.backend.ratings().items()}
        if state.ratings
        else None,
        "pending": state.pending.commit if state.pending else None,
        "spent": state.spent.model_dump(),
        "elapsed": state.elapsed,
        "sessions": state.sessions,
        "runs": state.runs,
        "noise": state.noise.deterministic if state.noise else None,
        "proposals": sorted(state.proposals),
        "last_proposal": state.last_proposal,
        "trees": sorted(state.trees),
        "tracker": [state.tracker.position, state.tracker.discards],
        "promotion_due": state.promotion_due,
        "history": [
            [h.generation, h.description, h.decision, h.parent, h.delta, h.proposer] for h in state.history
        ],
        "last_gate": state.last_gate,
        "retry": [retry.candidate_id, retry.score, retry.best_score, retry.needed] if retry else None,
        "trials": [[t.point.study, t.score, t.commit, t.unchanged, t.crashed] for t in state.trials],
        "gate_state": state.gate_state,
        "since_keep": state.since_keep,
        "kept_scores": state.kept_scores,
        "best_holdouts": state.best_holdouts,
        "content_hashes": state.content_hashes,
        "failing_sets": [sorted(s) for s in state.failing_sets],
        "failing_streak": state.failing_streak,
        "search_exhausted": state.search_exhausted,
        "suspects": state.suspects,
    }


def rounded(value: Any) -> Any:
    """``value`` with every float to 10 significant digits: Python 3.12's ``sum`` of floats is compensated, so
    the last bits of a sum differ from 3.11's."""
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v) for v in value]
    return value


def digest(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(rounded(data), sort_keys=True).encode()).hexdigest()[:16]


def record_fold(root: Path) -> None:
    from assay.config import load_config
    from assay.history.runfiles import read_events
    from assay.loop.engine import Evolution
    from assay.loop.events import typed_events
    from assay.loop.state import apply  # type: ignore[attr-defined]

    (run_dir,) = (root / ".assay" / "runs").iterdir()
    state = Evolution(load_config(root / "assay.yaml")).new_state()
    hashes = [digest(summary(apply(state, event))) for event in typed_events(read_events(run_dir))]
    fold = {"after_each_event": hashes, "at_the_end": summary(state)}
    (HERE / "run-v2.fold.json").write_text(json.dumps(fold, indent=1, sort_keys=True) + "\n")


def main() -> None:
    out = HERE / "run-v2.tar.gz"
    if "--fold-only" in sys.argv:
        with tempfile.TemporaryDirectory() as tmp, tarfile.open(out) as tar:
            tar.extractall(tmp, filter="data")
            record_fold(Path(tmp) / "proj")
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = make_project(Path(tmp) / "proj", cases=6, items=30, extra=EXTRA)
        env = {**os.environ, "ASSAY_FAULT": f"events.ndjson:{KILL_AFTER}:kill"}
        subprocess.run([sys.executable, "-m", "assay", "evolve", "-n", "12"], cwd=root, env=env, check=False)
        subprocess.run(["git", "worktree", "prune"], cwd=root, check=True)
        for tree in (root / ".assay" / "worktrees").glob("*"):
            subprocess.run(["rm", "-rf", str(tree)], check=True)
        subprocess.run(["git", "worktree", "prune"], cwd=root, check=True)
        with tarfile.open(out, "w:gz") as tar:
            tar.add(root, arcname="proj", filter=lambda info: None if "__pycache__" in info.name else info)
        record_fold(root)
    print(out, out.stat().st_size)


if __name__ == "__main__":
    main()
