"""The Linux back end: posix_spawn (vfork speed), a pidfd for the exit, the pipes read as they fill.

``run`` watches a child from the event loop that awaits it: its pidfd and pipes are readers of the loop and
its timeout a timer, so a case costs no thread and no hand-over between threads. (A watcher thread per child
cost the GIL's hand-overs: about 50 futex calls and 0.1 ms of CPU per case more, at four cases at once.)
``watch`` runs one child to the end in the calling thread: a jail worker's way, one case at a time. Both go
through the same stages: spawn, feed stdin, capture, end on exit, timeout or flood by killing the process
group, reap, then wait a grace for pipes a grandchild still holds.
"""

from __future__ import annotations

import contextlib
import os
import select
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assay.sandbox._common import (
    LIVE_GROUPS,
    PIPE_GRACE_S,
    READ_CHUNK,
    Capture,
    ProcessResult,
    SandboxLimits,
    finish,
    kill_group,
)

if TYPE_CHECKING:
    import asyncio

SHELL = "/bin/sh"
_READABLE = select.POLLIN | select.POLLHUP | select.POLLERR


def available() -> bool:
    """posix_spawn with setsid, and pidfds (Linux 5.3+)."""
    if not (hasattr(os, "posix_spawn") and hasattr(os, "pidfd_open") and os.path.exists(SHELL)):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


@dataclass
class Spawn:
    """One child to run, as plain data (a jail worker reads it off its request). ``session``: the child leads
    a session of its own (no controlling terminal); else a process group of its own, in the caller's session
    (a jail worker's, which has no terminal). Either way its group is what is killed at its end."""

    argv: list[str]
    env: Mapping[str, str]
    limits: SandboxLimits
    stdin: bytes | None
    session: bool = True


class _Child:
    """One running child's pipes and pidfd, as :class:`_Watch` (poll, in the calling thread) and
    :class:`_LoopWatch` (the event loop) watch them; they differ in how an fd stops being watched."""

    def __init__(self, spawn: Spawn, started: tuple[int, int, int, int, int]) -> None:
        self.pid, self.pidfd, out_r, err_r, self.in_w = started
        self.stdout = Capture(spawn.limits.max_output_bytes, keep_tail=False)
        self.stderr = Capture(spawn.limits.max_output_bytes, keep_tail=True)
        self.captures = {out_r: self.stdout, err_r: self.stderr}
        self.pending = memoryview(spawn.stdin or b"")
        if self.in_w >= 0:
            os.set_blocking(self.in_w, False)
        self.exit_code: int | None = None
        self.cpu_s: float | None = None
        self.exited = False

    def _unwatch(self, fd: int) -> None:
        raise NotImplementedError

    def _reap(self) -> None:
        self._unwatch(self.pidfd)
        _close(self.pidfd)
        try:
            _, status, usage = os.wait4(self.pid, 0)
            self.exit_code = os.waitstatus_to_exitcode(status)
            self.cpu_s = usage.ru_utime + usage.ru_stime
        except ChildProcessError:  # reaped by someone else (a waitpid(-1) child watcher)
            self.exit_code = None
        self.exited = True

    def _read(self, fd: int) -> bool:
        """Take what ``fd`` holds (at its end, stop watching it); True when the output is over its limit."""
        try:
            chunk = os.read(fd, READ_CHUNK)
        except OSError:
            chunk = b""
        if chunk:
            return self.captures[fd].add(chunk)
        self._unwatch(fd)
        _close(fd)
        del self.captures[fd]
        return False

    def _write(self) -> None:
        try:
            written = os.write(self.in_w, self.pending[:READ_CHUNK])
        except BlockingIOError:
            return
        except OSError:  # the child closed its stdin: nothing more to give it
            written = len(self.pending)
        self.pending = self.pending[written:]
        if not self.pending:
            self.close_stdin()

    def close_stdin(self) -> None:
        if self.in_w >= 0:
            self._unwatch(self.in_w)
            _close(self.in_w)
            self.in_w = -1

    def close_pipes(self) -> None:
        for fd in list(self.captures):
            self._unwatch(fd)
            _close(fd)
        self.captures.clear()


class _Watch(_Child):
    """A child polled by the thread that runs it."""

    def __init__(self, spawn: Spawn, started: tuple[int, int, int, int, int]) -> None:
        super().__init__(spawn, started)
        self.poller = select.poll()
        for fd in (self.pidfd, *self.captures):
            self.poller.register(fd, select.POLLIN)
        if self.in_w >= 0:
            self.poller.register(self.in_w, select.POLLOUT)
        self.flooded = False

    def _unwatch(self, fd: int) -> None:
        self.poller.unregister(fd)

    def step(self, timeout_s: float | None) -> None:
        """Wait up to ``timeout_s`` (None: no limit) and handle whatever became ready."""
        wait_ms = None if timeout_s is None else max(0, int(timeout_s * 1000) + 1)
        for fd, events in self.poller.poll(wait_ms):
            if fd == self.pidfd:
                self._reap()
            elif fd == self.in_w:
                self._write()
            elif events & _READABLE:
                self.flooded = self._read(fd) or self.flooded


def watch(spawn: Spawn, kill: Callable[[int], None] = kill_group) -> ProcessResult:
    """Run ``spawn`` to the end in this thread (blocking): spawn, feed stdin, capture output, enforce the
    timeout and the flood limit, ``kill`` the process group (a jail worker kills its whole namespace), reap."""
    start = time.perf_counter()
    limits = spawn.limits
    started = _start(spawn, start)
    if isinstance(started, ProcessResult):
        return started
    child = _Watch(spawn, started)
    deadline = start + limits.timeout_s
    timed_out = False
    try:
        while not child.exited and not child.flooded:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                timed_out = True
                break
            child.step(remaining)
    finally:
        child.close_stdin()
        # Ends children that outlive the main process too: they would hold the pipes open.
        kill(child.pid)
    while not child.exited:
        child.step(None)
    grace_end = time.perf_counter() + PIPE_GRACE_S
    while child.captures and (remaining := grace_end - time.perf_counter()) > 0:
        child.step(remaining)
    lost_pipes = bool(child.captures)  # a grandchild escaped the process group and keeps a pipe open
    child.close_pipes()
    return finish(
        stdout=child.stdout,
        stderr=child.stderr,
        exit_code=child.exit_code,
        timed_out=timed_out,
        lost_pipes=lost_pipes,
        limits=limits,
        duration_s=time.perf_counter() - start,
        cpu_s=child.cpu_s,
    )


def _start(spawn: Spawn, start: float) -> tuple[int, int, int, int, int] | ProcessResult:
    """Spawn the child: its pid, pidfd and our ends of its pipes (stdout, stderr, stdin or -1), or the
    error result when it could not start."""
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    in_r, in_w = os.pipe2(os.O_CLOEXEC) if spawn.stdin is not None else (-1, -1)
    actions: list[tuple[int, int, int] | tuple[int, int, str, int, int]] = [
        (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2),
    ]
    if spawn.stdin is not None:
        actions.append((os.POSIX_SPAWN_DUP2, in_r, 0))
    else:
        actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
    pid: int | None = None
    try:
        # A new session is a new scheduling group where the kernel groups tasks by session (autogroup): making
        # one costs the child a millisecond or more before it runs. A jail worker's session has no terminal to
        # keep its cases from, so there a process group of their own does.
        group = {"setsid": True} if spawn.session else {"setpgroup": 0}
        pid = os.posix_spawn(spawn.argv[0], spawn.argv, spawn.env, file_actions=actions, **group)
        LIVE_GROUPS.add(pid)
        pidfd = os.pidfd_open(pid)
    except OSError as exc:
        for fd in (out_r, out_w, err_r, err_w, in_r, in_w):
            if fd >= 0:
                _close(fd)
        if pid is not None:
            kill_group(pid)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        return ProcessResult(error=f"could not start process: {exc}", duration_s=time.perf_counter() - start)
    for fd in (out_w, err_w, in_r):
        if fd >= 0:
            _close(fd)
    return pid, pidfd, out_r, err_r, in_w


class _LoopWatch(_Child):
    """One child watched by the event loop itself: its pidfd and pipes are readers of the loop, its
    timeout a timer; ``done`` gets the result. The same stages as :func:`watch`."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        spawn: Spawn,
        started: tuple[int, int, int, int, int],
        start: float,
    ) -> None:
        super().__init__(spawn, started)
        self.loop = loop
        self.limits = spawn.limits
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

    start = time.perf_counter()
    spawn = Spawn(list(argv), env, limits, stdin)
    started = _start(spawn, start)
    if isinstance(started, ProcessResult):
        return started
    child = _LoopWatch(asyncio.get_running_loop(), spawn, started, start)
    try:
        return await child.done
    except asyncio.CancelledError:
        child.end()
        raise
