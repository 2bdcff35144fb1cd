"""The Linux back end: posix_spawn (vfork speed), a pidfd for the exit, the pipes read as they fill.

``run`` watches a child from the event loop that awaits it: its pidfd and pipes are readers of the loop and
its timeout a timer, so a case costs no thread and no hand-over between threads while it runs. (A watcher
thread per child cost the GIL's hand-overs: about 50 futex calls and 0.1 ms of CPU per case more, at four
cases at once.) The spawn itself is made from a helper thread with the interpreter lock released
(:mod:`assay.sandbox._cspawn`), so the loop goes on while the child waits for a CPU to reach its exec. The
stages are :mod:`assay.sandbox._watch`'s, which a jail worker runs in its own thread: spawn, feed stdin,
capture, end on exit, timeout or flood by killing the process group, reap, then wait a grace for pipes a
grandchild still holds.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from assay.sandbox import _cspawn
from assay.sandbox._common import PIPE_GRACE_S, ProcessResult, SandboxLimits, finish
from assay.sandbox._watch import SHELL, Child, Spawn, Started, close, kill_group, start

if TYPE_CHECKING:
    import asyncio


def available() -> bool:
    """posix_spawn with setsid, and pidfds (Linux 5.3+)."""
    if not (hasattr(os, "posix_spawn") and hasattr(os, "pidfd_open") and os.path.exists(SHELL)):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


_NO_TERMINAL: dict[int, bool] = {}


def without_terminal() -> bool:
    """Whether this process has no controlling terminal (known once per process): then a child in its session
    cannot reach one either, and a process group of its own keeps it as apart as a session would, without the
    cost of a new session (see :func:`assay.sandbox._watch.start`)."""
    pid = os.getpid()
    known = _NO_TERMINAL.get(pid)
    if known is None:
        try:
            os.close(os.open("/dev/tty", os.O_RDWR | os.O_CLOEXEC))
            known = False
        except OSError as exc:
            known = exc.errno == errno.ENXIO  # "no such device": no controlling terminal
        _NO_TERMINAL[pid] = known
    return known


_SPAWN_THREADS = 8
_spawners: tuple[int, ThreadPoolExecutor] | None = None


def _spawn_threads() -> ThreadPoolExecutor:
    """The threads that spawn children for the event loop (made again in a forked child)."""
    global _spawners
    if _spawners is None or _spawners[0] != os.getpid():
        _spawners = (os.getpid(), ThreadPoolExecutor(_SPAWN_THREADS, thread_name_prefix="assay-spawn"))
    return _spawners[1]


def _end(started: Started | str) -> None:
    """A child spawned for a caller that was cancelled meanwhile: killed, reaped, its pipes closed."""
    if isinstance(started, str):
        return
    pid, pidfd, *pipes = started
    kill_group(pid)
    for fd in (pidfd, *pipes):
        if fd >= 0:
            close(fd)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


class _Handoff:
    """A spawn on a helper thread for a caller that may be cancelled meanwhile: whichever of the two comes
    second ends the child (the thread, when the caller is gone; the caller, when the child has started). The
    thread does not count on the loop: at a Ctrl-C the loop may stop before the thread's answer reaches it,
    and a child left running would hold the run's end until it exits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._gone = False
        self._started: Started | str | None = None

    def spawn(self, spawn: Spawn) -> Started | str:
        """On the helper thread: start the child, and end it at once if the caller has gone."""
        started = start(spawn, _cspawn.posix_spawn)
        with self._lock:
            self._started, gone = started, self._gone
        if gone:
            _end(started)
        return started

    def cancel(self) -> None:
        """On the loop, for a cancelled caller: end the child if it has started (else the thread will)."""
        with self._lock:
            self._gone, started = True, self._started
        if started is not None:
            _end(started)


class _LoopWatch(Child):
    """One child watched by the event loop itself: its pidfd and pipes are readers of the loop, its
    timeout a timer; ``done`` gets the result. The same stages as :func:`assay.sandbox._watch.watch`."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        spawn: Spawn,
        started: Started,
        start: float,
        limits: SandboxLimits,
    ) -> None:
        super().__init__(spawn, started)
        self.loop = loop
        self.limits = limits
        self.start = start
        self.ending = self.timed_out = self.lost_pipes = False
        self.done: asyncio.Future[ProcessResult] = loop.create_future()
        loop.add_reader(self.pidfd, self._on_exit)
        for fd in self.captures:
            loop.add_reader(fd, self._on_output, fd)
        if self.in_w >= 0:
            loop.add_writer(self.in_w, self._write)
        self.timer: asyncio.TimerHandle | None = loop.call_later(self.limits.timeout_s, self._time_out)

    def _unwatch(self, fd: int) -> None:
        if fd == self.in_w:
            self.loop.remove_writer(fd)
        else:
            self.loop.remove_reader(fd)

    def _time_out(self) -> None:
        self.timer = None
        self.timed_out = True
        self.end()

    def end(self) -> None:
        """Stop feeding the child and kill its group (what outlives the main process would hold the pipes
        open); the result follows once it is reaped and its pipes are closed, or the grace ran out."""
        if self.ending:
            return
        self.ending = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.close_stdin()
        kill_group(self.pid)
        self._settle()

    def _on_exit(self) -> None:
        self._reap()
        self.end() if not self.ending else self._settle()

    def _on_output(self, fd: int) -> None:
        if self._read(fd):
            self.end()
        elif fd not in self.captures:
            self._settle()

    def _settle(self) -> None:
        """Once reaped: done when the pipes are closed; else wait for them up to the grace."""
        if not self.exited or self.done.done():
            return
        if self.captures and self.timer is None:
            self.timer = self.loop.call_later(PIPE_GRACE_S, self._lose_pipes)
            return
        if not self.captures:
            self._finish()

    def _lose_pipes(self) -> None:
        self.lost_pipes = True  # a grandchild escaped the process group and keeps a pipe open
        self.close_pipes()
        self._finish()

    def _finish(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.done.done():  # the awaiting task was cancelled
            return
        self.done.set_result(
            finish(
                stdout=self.stdout,
                stderr=self.stderr,
                exit_code=self.exit_code,
                timed_out=self.timed_out,
                lost_pipes=self.lost_pipes,
                limits=self.limits,
                duration_s=time.perf_counter() - self.start,
                cpu_s=self.cpu_s,
            )
        )


async def run(
    argv: list[str], *, env: Mapping[str, str], limits: SandboxLimits, stdin: bytes | None
) -> ProcessResult:
    """Spawn ``argv`` (a /bin/sh command line from ``shell_argv``) and watch it from the running event loop
    until its result. Cancelling the caller kills the child's process group (it is still reaped)."""
    import asyncio  # here: a jail worker imports this module to run cases, and starts faster without it

    begun = time.perf_counter()
    spawn = Spawn(
        list(argv),
        env,
        timeout_s=limits.timeout_s,
        max_output_bytes=limits.max_output_bytes,
        stdin=stdin,
        session=not without_terminal(),
    )
    loop = asyncio.get_running_loop()
    if _cspawn.available():
        # Spawned from a thread with the interpreter lock released: the loop goes on with other cases while
        # this child waits for a CPU to reach its exec (os.posix_spawn would hold the lock, and the loop, that
        # long: up to milliseconds per case on a busy machine).
        handoff = _Handoff()
        try:
            started = await asyncio.shield(loop.run_in_executor(_spawn_threads(), handoff.spawn, spawn))
        except asyncio.CancelledError:
            handoff.cancel()
            raise
    else:
        started = start(spawn)
    if isinstance(started, str):
        return ProcessResult(error=started, duration_s=time.perf_counter() - begun)
    child = _LoopWatch(loop, spawn, started, begun, limits)
    try:
        return await child.done
    except asyncio.CancelledError:
        child.end()
        raise
