"""The run lock: held while a process runs a run, gone with the process however it dies."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from assay.history.owner import LOCK_NAME, RunBusy, RunOwner, is_live, live_status, owner_text, resumable
from assay.history.records import RunRecord

HOLDER = """
import os, sys, time
from pathlib import Path
from assay.history.owner import RunOwner
run_dir = Path(sys.argv[1])
owner = RunOwner(run_dir)
owner.acquire()
# os.system does not close descriptors: a child that outlives this process must not inherit the lock.
os.system(f"sleep 60 & echo $! > {run_dir / 'child.pid'}")
print("held", flush=True)
time.sleep(60)
"""


def _run(run_id: str, status: str = "running") -> RunRecord:
    return RunRecord.model_validate({"run_id": run_id, "status": status, "branch": "b", "base_commit": "c"})


def _hold(run_dir: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_a_run_held_by_a_live_process_is_running_and_interrupted_once_it_is_killed(tmp_path: Path) -> None:
    run_dir = tmp_path / "r1"
    proc = _hold(run_dir)
    child = int((run_dir / "child.pid").read_text())
    try:
        assert is_live(run_dir)
        assert live_status(_run("r1"), run_dir) == "running"
        assert f"pid {proc.pid} on " in owner_text(run_dir)
        with pytest.raises(RunBusy, match=f"run r1 is running in another process \\(pid {proc.pid} on "):
            RunOwner(run_dir).acquire()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        os.kill(child, 0)  # the child the killed process started still runs ...
        assert not is_live(run_dir)  # ... and does not hold the lock
        assert live_status(_run("r1"), run_dir) == "interrupted"
        with RunOwner(run_dir):
            assert is_live(run_dir)
            assert f"pid {os.getpid()} on " in owner_text(run_dir)
        assert not is_live(run_dir)
    finally:
        proc.kill()
        proc.wait()
        os.kill(child, signal.SIGKILL)


def test_only_a_running_run_can_be_interrupted(tmp_path: Path) -> None:
    assert not (tmp_path / "r1").exists()
    assert live_status(_run("r1"), tmp_path / "r1") == "interrupted"  # no lock file: nobody ever held it
    for status in ("finished", "stopped", "failed"):
        assert live_status(_run("r1", status), tmp_path / "r1") == status


def test_resumable_runs_are_stopped_or_interrupted(tmp_path: Path) -> None:
    runs = [_run("a", "finished"), _run("b", "stopped"), _run("c"), _run("d")]
    with RunOwner(tmp_path / "d"):
        assert [r.run_id for r in resumable(runs, tmp_path)] == ["b", "c"]
    assert [r.run_id for r in resumable(runs, tmp_path)] == ["b", "c", "d"]


def test_a_reader_testing_the_lock_does_not_keep_the_owner_out(tmp_path: Path) -> None:
    run_dir = tmp_path / "r1"
    run_dir.mkdir()
    fd = os.open(run_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_SH)  # a reader in the middle of is_live
    threading.Timer(0.3, os.close, [fd]).start()
    started = time.monotonic()
    with RunOwner(run_dir):
        assert time.monotonic() - started >= 0.25
        assert is_live(run_dir)
