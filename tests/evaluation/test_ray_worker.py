"""The Ray worker's scratch directories: those of dead worker processes are swept by the next worker."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from assay.evaluation.ray_worker import SCRATCH_PREFIX, sweep_dead_scratch
from assay.history.owner import LOCK_NAME, RunOwner

HOLD = (
    "import sys, time\n"
    "from assay.history.owner import RunOwner\n"
    "RunOwner(sys.argv[1]).acquire()\n"
    "print('held', flush=True)\n"
    "time.sleep(60)\n"
)


def _age(path: Path, seconds: float) -> None:
    past = time.time() - seconds
    os.utime(path / LOCK_NAME, (past, past))


def test_scratch_of_killed_workers_is_removed_and_live_ones_are_kept(tmp_path: Path) -> None:
    killed = tmp_path / f"{SCRATCH_PREFIX}killed"
    (killed / "tree-1").mkdir(parents=True)
    (killed / "tree-1" / "main.py").write_text("x = 1\n")
    worker = subprocess.Popen([sys.executable, "-c", HOLD, str(killed)], stdout=subprocess.PIPE, text=True)
    assert worker.stdout is not None and worker.stdout.readline() == "held\n"
    live = tmp_path / f"{SCRATCH_PREFIX}live"
    owner = RunOwner(live)
    owner.acquire()
    starting = tmp_path / f"{SCRATCH_PREFIX}starting"  # lock file just written, lock not yet held
    starting.mkdir()
    (starting / LOCK_NAME).write_text("")
    unlocked = tmp_path / f"{SCRATCH_PREFIX}other"  # no lock file: not a worker's directory
    unlocked.mkdir()
    try:
        _age(killed, 120)
        _age(live, 120)
        assert sweep_dead_scratch(tmp_path) == []  # the worker still runs
        worker.kill()
        worker.wait(timeout=10)
        assert sweep_dead_scratch(tmp_path) == [killed]
        assert not killed.exists()
        assert live.is_dir() and starting.is_dir() and unlocked.is_dir()
    finally:
        owner.release()
        worker.kill()
