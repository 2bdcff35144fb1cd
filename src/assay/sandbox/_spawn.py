"""The Linux back end: posix_spawn (vfork speed), a pidfd for the exit, the pipes read as they fill.

``run`` watches a child from the event loop that awaits it: its pipes are readers of the loop, its timeout a
timer (and its pidfd a reader once it has run 50 ms), so a case costs no thread of its own while it runs. (A
watcher thread per child cost the GIL's hand-overs: about 50 futex calls and 0.1 ms of CPU per case more, at four
cases at once.) The spawn itself is made by a launcher thread with the interpreter lock released
(:mod:`assay.sandbox._cspawn`), and nothing comes back from it to the loop: the end of the pipes says the rest
(:class:`_LoopWatch`). The stages are :mod:`assay.sandbox._watch`'s, which a jail worker runs in its own thread:
spawn, feed stdin, capture, end on exit, timeout or flood by killing the process group, reap, then wait a grace
for pipes a grandchild still holds.
"""

from __future__ import annotations

import errno
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from assay.sandbox import _cspawn
from assay.sandbox._common import PIPE_GRACE_S, ProcessResult, SandboxLimits, finish
from assay.sandbox._watch import SHELL, Child, Spawn, close, kill_group, launch, pipes

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


# How long a child may run before its pidfd joins the loop's readers: a child's exit is learned from the end of
# its pipes, but one whose pipes a grandchild holds open must still be seen to exit (then the grace runs).
EXIT_WATCH_S = 0.05
# A spawn keeps a CPU busy until the child's exec (its launcher waits meanwhile): more launchers than CPUs
# only add wake-ups. On 2 cores, 2 against 8: 3% less wall idle, the same under load (docs/speed.md).
_CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 2
_LAUNCHERS = max(2, min(8, _CPUS))


class _Launchers:
    """Threads that spawn the loop's children (made again in a forked child). A child is handed over by a
    queue and nothing comes back to the loop: the launcher sets the pid, then closes the child's ends of the
    pipes, and the loop learns the rest from the pipes' end (or from the pidfd, see :data:`EXIT_WATCH_S`)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.queue: queue.SimpleQueue[_LoopWatch] = queue.SimpleQueue()
        posix_spawn = _cspawn.posix_spawn if _cspawn.available() else None
        for number in range(_LAUNCHERS):
            threading.Thread(
                target=self._serve, args=(posix_spawn,), name=f"assay-spawn-{number}", daemon=True
            ).start()

    def _serve(self, posix_spawn: Callable[..., int] | None) -> None:
        while True:
            self.queue.get().launch(posix_spawn)


_launchers: _Launchers | None = None


def _hand_over(child: _LoopWatch) -> None:
    global _launchers
    if _launchers is None or _launchers.pid != os.getpid():
        _launchers = _Launchers()
    _launchers.queue.put(child)


class _LoopWatch(Child):
    """One child watched by the event loop itself: its pipes are readers of the loop from before its spawn, its
    timeout a timer; ``done`` gets the result. The same stages as :func:`assay.sandbox._watch.watch`.

    The spawn is made on a launcher thread (the C library's ``posix_spawn`` releases the interpreter lock
    while the child gets to its exec), so the loop goes on while a child waits for a CPU. No answer comes back
    from that thread: its closing the child's ends of the pipes, after it set ``pid``, is how the loop learns
    the child has started and, once the child has closed them too, that it is ending. A spawn made on the
    loop's thread was 7% faster on an idle machine and 40% slower on a busy one; a spawn whose answer came
    back to the loop (a thread pool's future) 4–6% slower than this in both (docs/speed.md)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, spawn: Spawn, start: float, limits: SandboxLimits
    ) -> None:
        ours, self.ends = pipes(spawn)
        super().__init__(spawn, (-1, -1, *ours))
        self.spawn = spawn
        self.loop = loop
        self.limits = limits
        self.start = start
        self.lock = threading.Lock()
        self.gone = False
        self.error: str | None = None
        self.exit_watched = self.ending = self.timed_out = self.lost_pipes = False
        self.done: asyncio.Future[ProcessResult] = loop.create_future()
        for fd in self.captures:
            loop.add_reader(fd, self._on_output, fd)
        if self.in_w >= 0:
            loop.add_writer(self.in_w, self._write)
        self.deadline = loop.time() + limits.timeout_s
        self.timer: asyncio.TimerHandle | None = loop.call_later(
            min(EXIT_WATCH_S, limits.timeout_s), self._on_timer
        )

    def launch(self, posix_spawn: Callable[..., int] | None) -> None:
        """On a launcher thread: spawn the child, unless the caller has gone; end it if the caller went
        meanwhile; then close the child's ends of the pipes (the loop learns from their end)."""
        with self.lock:
            gone = self.gone
        try:
            launched = None if gone else launch(self.spawn, self.ends, posix_spawn)
        except Exception as exc:  # the case fails; the launcher serves on
            launched = f"could not start process: {exc}"
        with self.lock:
            if isinstance(launched, str):
                self.error = launched
            elif launched is not None:
                self.pid, self.pidfd = launched
            gone = self.gone
        if gone and self.pid > 0:
            kill_group(self.pid)
        for fd in self.ends:
            if fd >= 0:
                close(fd)

    def _unwatch(self, fd: int) -> None:
        if fd == self.in_w:
            self.loop.remove_writer(fd)
        elif fd != self.pidfd or self.exit_watched:
            self.loop.remove_reader(fd)

    def _on_timer(self) -> None:
        self.timer = None
        remaining = self.deadline - self.loop.time()
        if remaining > 0:
            self._watch_exit()
            self.timer = self.loop.call_later(remaining, self._on_timer)
            return
        self.timed_out = True
        self.end()

    def _watch_exit(self) -> None:
        """Watch the pidfd of a child that has started (the loop then wakes at its exit)."""
        if self.pid > 0 and not self.exit_watched and not self.exited:
            self.exit_watched = True
            self.loop.add_reader(self.pidfd, self._on_exit)

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
        with self.lock:
            self.gone = True  # a launcher yet to spawn the child ends it instead
            pid = self.pid
        if pid > 0:
            kill_group(pid)
            self._watch_exit()
        self._settle()

    def _on_exit(self) -> None:
        self._reap()
        self.end() if not self.ending else self._settle()

    def _on_output(self, fd: int) -> None:
        if self._read(fd):
            self.end()
        elif not self.captures:
            self._pipes_ended()

    def _pipes_ended(self) -> None:
        """Both pipes ended: the launcher has closed its ends (so ``pid`` is set) and so has the child."""
        if self.pid < 0:  # it could not start, or its caller went before it did
            self._finish()
            return
        if not self.exited:
            self._reap(os.WNOHANG)
        if self.exited:
            self.end() if not self.ending else self._settle()
        else:
            self._watch_exit()  # it closed its output and runs on

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
        if self.error is not None:
            self.done.set_result(ProcessResult(error=self.error, duration_s=time.perf_counter() - self.start))
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

    spawn = Spawn(
        list(argv),
        env,
        timeout_s=limits.timeout_s,
        max_output_bytes=limits.max_output_bytes,
        stdin=stdin,
        session=not without_terminal(),
    )
    child = _LoopWatch(asyncio.get_running_loop(), spawn, time.perf_counter(), limits)
    _hand_over(child)
    try:
        return await child.done
    except asyncio.CancelledError:
        child.end()
        raise
