"""The Linux back end: posix_spawn (vfork speed), a pidfd for the exit, non-blocking pipes in the event loop.

asyncio's subprocess machinery (Popen in Python, transports, protocols, stream readers, a task per pipe)
cost more main-thread time per case than the process itself for small commands; this does the same job with
a handful of system calls and callbacks.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Mapping

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

SHELL = "/bin/sh"


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


class _Child:
    """One running child: its pipes and pidfd registered with the loop, finished through ``done``."""

    def __init__(self, loop: asyncio.AbstractEventLoop, limits: SandboxLimits) -> None:
        self.loop = loop
        self.limits = limits
        self.stdout = Capture(limits.max_output_bytes, keep_tail=False)
        self.stderr = Capture(limits.max_output_bytes, keep_tail=True)
        self.done: asyncio.Future[str] = loop.create_future()
        self.exited: asyncio.Future[int | None] = loop.create_future()
        self.pipes_closed: asyncio.Future[None] = loop.create_future()
        self.open_pipes = 0
        self.pending_stdin = memoryview(b"")

    def signal(self, reason: str) -> None:
        if not self.done.done():
            self.done.set_result(reason)

    def watch_output(self, fd: int, capture: Capture) -> None:
        os.set_blocking(fd, False)
        self.open_pipes += 1
        self.loop.add_reader(fd, self._readable, fd, capture)

    def _readable(self, fd: int, capture: Capture) -> None:
        try:
            chunk = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            if capture.add(chunk):
                self.signal("flood")
            return
        self.loop.remove_reader(fd)
        _close(fd)
        self.open_pipes -= 1
        if self.open_pipes == 0 and not self.pipes_closed.done():
            self.pipes_closed.set_result(None)

    def watch_exit(self, pid: int, pidfd: int) -> None:
        self.loop.add_reader(pidfd, self._exited, pid, pidfd)

    def _exited(self, pid: int, pidfd: int) -> None:
        self.loop.remove_reader(pidfd)
        _close(pidfd)
        try:
            _, status = os.waitpid(pid, 0)
            code: int | None = os.waitstatus_to_exitcode(status)
        except ChildProcessError:  # reaped by someone else (a waitpid(-1) child watcher)
            code = None
        self.exited.set_result(code)
        self.signal("exit")

    def feed_stdin(self, fd: int, data: bytes) -> None:
        os.set_blocking(fd, False)
        self.pending_stdin = memoryview(data)
        self.loop.add_writer(fd, self._writable, fd)

    def _writable(self, fd: int) -> None:
        try:
            written = os.write(fd, self.pending_stdin[:READ_CHUNK])
        except BlockingIOError:
            return
        except OSError:  # the child closed its stdin: nothing more to give it
            written = len(self.pending_stdin)
        self.pending_stdin = self.pending_stdin[written:]
        if not self.pending_stdin:
            self.stop_stdin(fd)

    def stop_stdin(self, fd: int) -> None:
        if self.loop.remove_writer(fd):
            _close(fd)


async def run(
    argv: list[str], *, env: Mapping[str, str], limits: SandboxLimits, stdin: bytes | None
) -> ProcessResult:
    """Spawn ``argv`` (a /bin/sh command line from ``shell_argv``) and watch it until done."""
    start = time.perf_counter()
    loop = asyncio.get_running_loop()
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    in_r, in_w = os.pipe2(os.O_CLOEXEC) if stdin is not None else (-1, -1)
    actions: list[tuple[int, int, int] | tuple[int, int, str, int, int]] = [
        (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2),
    ]
    if stdin is not None:
        actions.append((os.POSIX_SPAWN_DUP2, in_r, 0))
    else:
        actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
    try:
        pid = os.posix_spawn(argv[0], argv, env, file_actions=actions, setsid=True)
        pidfd = os.pidfd_open(pid)
    except OSError as exc:
        for fd in (out_r, out_w, err_r, err_w, in_r, in_w):
            if fd >= 0:
                _close(fd)
        return ProcessResult(error=f"could not start process: {exc}", duration_s=time.perf_counter() - start)
    LIVE_GROUPS.add(pid)
    for fd in (out_w, err_w, in_r):
        if fd >= 0:
            _close(fd)

    child = _Child(loop, limits)
    child.watch_exit(pid, pidfd)
    child.watch_output(out_r, child.stdout)
    child.watch_output(err_r, child.stderr)
    if stdin is not None:
        child.feed_stdin(in_w, stdin)
    timer = loop.call_later(limits.timeout_s, child.signal, "timeout")
    try:
        timed_out = await child.done == "timeout"
    finally:
        timer.cancel()
        if stdin is not None:
            child.stop_stdin(in_w)
        # Ends children that outlive the main process too: they would hold the pipes open.
        kill_group(pid)
    exit_code = await child.exited
    lost_pipes = False
    if not child.pipes_closed.done():
        try:
            await asyncio.wait_for(asyncio.shield(child.pipes_closed), PIPE_GRACE_S)
        except TimeoutError:  # a grandchild escaped the process group and keeps a pipe open
            lost_pipes = True
            for fd in (out_r, err_r):
                if loop.remove_reader(fd):
                    _close(fd)
    return finish(
        stdout=child.stdout,
        stderr=child.stderr,
        exit_code=exit_code,
        timed_out=timed_out,
        lost_pipes=lost_pipes,
        limits=limits,
        duration_s=time.perf_counter() - start,
    )
