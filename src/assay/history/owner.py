"""Who runs a run: an exclusive ``flock`` on ``<run dir>/owner.lock``, held by the process running it.

The kernel releases the lock when its holder exits, however it exits (SIGKILL and the OOM killer included),
and a new process that happens to get the old pid does not get the lock, so a run recorded as ``running``
whose lock is free was interrupted. The lock is taken on a descriptor that is not inherited, so a case runner
left behind by a killed run does not keep it alive. The file also names the holder (pid, host, start time)
for people and error messages; only the lock decides. A reader tests the lock with a shared lock, which it
holds for an instant; the owner retries for a moment so such a reader cannot make it fail.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Literal

from assay.errors import AssayError
from assay.history.records import RunRecord, now_iso

LOCK_NAME = "owner.lock"
CLAIM_SECONDS = 2.0

LiveStatus = Literal["running", "stopped", "finished", "failed", "interrupted"]


class RunBusy(AssayError):
    """Another live process runs this run."""


def _held_elsewhere(fd: int, operation: int) -> bool:
    """Try ``operation`` (``LOCK_EX`` or ``LOCK_SH``) without blocking; True when another holder prevents it."""
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return True
        raise
    return False


def owner_text(run_dir: Path) -> str:
    """Who the lock file names as the run's holder (``pid 123 on host since ...``), or ``""``."""
    try:
        data = json.loads((Path(run_dir) / LOCK_NAME).read_text())
        return f"pid {data['pid']} on {data['host']} since {data['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def is_live(run_dir: Path) -> bool:
    """True while a process holds the run's lock, i.e. is running it now."""
    try:
        fd = os.open(Path(run_dir) / LOCK_NAME, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        return _held_elsewhere(fd, fcntl.LOCK_SH)
    finally:
        os.close(fd)  # also drops the shared lock, if this took it


class RunOwner:
    """The lock of a run held by this process (``with RunOwner(run_dir):`` around running the run)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock and write this process's name in the file; :class:`RunBusy` if a live process has it."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + CLAIM_SECONDS
        while _held_elsewhere(fd, fcntl.LOCK_EX):
            if time.monotonic() >= deadline:
                os.close(fd)
                holder = owner_text(self.run_dir)
                raise RunBusy(
                    f"run {self.run_dir.name} is running in another process"
                    f"{f' ({holder})' if holder else ''}; wait for it or stop it first"
                )
            time.sleep(0.05)
        info = {"pid": os.getpid(), "host": socket.gethostname(), "since": now_iso()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Give the lock up (the file stays: it names the last holder)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunOwner:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def live_status(run: RunRecord, run_dir: Path) -> LiveStatus:
    """The run's status as it stands now: ``interrupted`` for a run recorded as running that no process holds
    (killed, crashed, or the machine went down); otherwise the recorded status."""
    if run.status == "running" and not is_live(run_dir):
        return "interrupted"
    return run.status


def resumable(runs: Sequence[RunRecord], runs_dir: Path) -> list[RunRecord]:
    """The runs ``assay resume`` can continue, oldest first: stopped or interrupted, not live or finished."""
    return [r for r in runs if live_status(r, runs_dir / r.run_id) in ("stopped", "interrupted")]
