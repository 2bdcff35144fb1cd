"""Records tests/loop/data/run-v2.tar.gz: a project whose run was written by assay before loop state was split
into owned parts (commit d991fbd), killed after its 60th event, for tests/loop/test_recorded_run.py.

Run from the repository root: ``PYTHONPATH=src python tests/loop/data/record_run_v2.py``. The run uses the
ranked search with proposals made ahead, the tournament and the trend gate (whose retries flag candidates), so
its events hold every kind the loop writes but ``picked``."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[3]))

from tests.loop.conftest import make_project

EXTRA = (
    "evolve:\n  search: ranked\n  pipeline: 3\n  gate: trend\n  gate_options: {min_delta: 0.02, max_retries: 1}\n"
    "  target_pass_rate: null\n  stop_on_oscillation: false\n  discards_per_layer: 2\n  l3_every: 2\n"
    "  tournament: {opponents: adaptive, k: 2, rating: bradley_terry}\n"
)
KILL_AFTER = 60


def main() -> None:
    out = Path(__file__).parent / "run-v2.tar.gz"
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
    print(out, out.stat().st_size)


if __name__ == "__main__":
    main()
