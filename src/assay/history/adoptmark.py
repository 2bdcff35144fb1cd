"""The adopt marker ``<git common dir>/assay-adopt.lock``: whether an adopt runs now, and what the last one did.

An adopt holds an exclusive ``flock`` on the file while it runs and writes in it, before each step, what the
step is: ``merging`` (building a merge commit in the temporary work tree ``scratch``), ``moving`` (moving
``branch`` from ``old`` to ``merged``), and ``done`` at the end. The kernel drops the lock however the process
ends (SIGKILL included) and a later process given the same pid does not inherit it, so the next adopt that gets
the lock and reads a step other than ``done`` knows an adopt was killed, and where (see
:mod:`assay.history.recover`); a second adopt while one runs is refused. Git itself never reads or writes the
file (its own locks are named after files it writes, and it writes no ``assay-adopt``).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal

from assay.history.gitrun import GitError

if TYPE_CHECKING:
    from assay.history.git import Git

MARKER_NAME = "assay-adopt.lock"

Step = Literal["merging", "moving", "done"]


class AdoptBusy(GitError):
    """Another live process is adopting into this repository."""


@dataclass(frozen=True)
class AdoptStep:
    """What an adopt (process ``pid`` on ``host``) was doing: ``step`` on ``branch``, checked out in ``tree``
    (None when it is not), with its temporary work tree ``scratch``, moving the branch from ``old`` to
    ``merged``."""

    step: Step
    pid: int
    host: str
    branch: str = ""
    tree: str | None = None
    scratch: str | None = None
    old: str | None = None
    merged: str | None = None

    def holder(self) -> str:
        """``pid 123 on host``, for messages."""
        return f"pid {self.pid} on {self.host}"


def marker_path(git: Git) -> Path:
    """Where the repository's adopt marker lives: in the common git directory, shared by all work trees."""
    common = Path(git.run("rev-parse", "--git-common-dir").stdout.strip())
    return (common if common.is_absolute() else git.root / common) / MARKER_NAME


def _read(fd: int) -> AdoptStep | None:
    """The step the file records; None when it is empty or unreadable (a marker is only ever a hint)."""
    try:
        data = json.loads(os.pread(fd, 1 << 16, 0).decode() or "null")
        return AdoptStep(**data) if isinstance(data, dict) else None
    except (ValueError, TypeError):
        return None


class AdoptMarker:
    """The marker held by this process (``with AdoptMarker(path) as marker:`` around one adopt).

    ``previous`` is what an earlier adopt was doing when it was killed; None when the last one finished (or
    none ever ran). On leaving the block the marker records ``done``, except after an exception raised while
    ``moving`` (the next adopt checks the work tree that step may have left half-moved), and unless this
    process recorded no step of its own (refused before starting, it leaves ``previous`` for the next one).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.previous: AdoptStep | None = None
        self._fd: int | None = None
        self._state = AdoptStep("done", os.getpid(), socket.gethostname())
        self._recorded = False

    def acquire(self) -> None:
        """Take the lock (:class:`AdoptBusy` when a live process holds it) and read what the last adopt did."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _read(fd)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise GitError(f"assay adopt: cannot lock {self.path}: {exc.strerror}") from None
            who = f" ({holder.holder()})" if holder else ""
            raise AdoptBusy(
                f"assay adopt: another adopt is running in this repository{who}; wait for it to finish"
            ) from None
        self._fd = fd
        previous = _read(fd)
        self.previous = previous if previous is not None and previous.step != "done" else None

    def record(
        self,
        step: Step,
        *,
        branch: str | None = None,
        tree: str | None = None,
        scratch: str | None = None,
        old: str | None = None,
        merged: str | None = None,
    ) -> None:
        """Write ``step`` before doing it; the fields given are kept for the later steps."""
        if self._fd is None:
            raise GitError(f"assay adopt: {self.path} is not held by this process")
        was = self._state
        self._state = AdoptStep(
            step,
            was.pid,
            was.host,
            branch=branch or was.branch,
            tree=tree or was.tree,
            scratch=scratch or was.scratch,
            old=old or was.old,
            merged=merged or was.merged,
        )
        payload = json.dumps(asdict(self._state)).encode()
        size = os.fstat(self._fd).st_size
        # Padded over the old content instead of truncated first, so a kill between two system calls never
        # leaves an empty or half-old file: JSON ignores the trailing spaces.
        os.pwrite(self._fd, payload.ljust(size, b" "), 0)
        self._recorded = True

    def release(self, *, finished: bool = True) -> None:
        """Record ``done`` (unless ``finished`` is False or no step was recorded) and give the lock up; the file
        stays."""
        if self._fd is None:
            return
        try:
            if finished and self._recorded:
                self.record("done")
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> AdoptMarker:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release(finished=exc is None or self._state.step != "moving")
