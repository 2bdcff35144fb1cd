"""One child process from its spawn to its end, with nothing but the lightest of the standard library (no
typing, no dataclasses): the jail worker imports this module at each start, inside the jail and on the way to
the first case, and runs every case through :func:`watch`; assay's event loop goes through the same stages
(:mod:`assay.sandbox._spawn`).

The stages: spawn (``posix_spawn``, a pidfd for the exit), feed stdin, capture the output (stdout keeps its
head, stderr its tail, each at most a cap; past ``cap × FLOOD_FACTOR`` bytes the child is killed), end on exit,
timeout or flood by killing the process group, reap, then wait a grace for pipes a grandchild still holds.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time

TYPE_CHECKING = False  # typing itself is not imported: it would cost the worker's start more than it gives
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

# Past cap × this many bytes the process is killed: it would only burn time until the timeout.
FLOOD_FACTOR = 8
READ_CHUNK = 65536
# A grandchild that left the process group can hold a pipe open; this long after exit we stop reading.
PIPE_GRACE_S = 2.0
SHELL = "/bin/sh"
_READABLE = select.POLLIN | select.POLLHUP | select.POLLERR

# Process groups of the untrusted processes running now, so that a SIGTERM or SIGHUP to assay can end them
# (see :func:`assay.sandbox.install_cleanup`).
LIVE_GROUPS: set[int] = set()


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (the child leads a group of its own)."""
    LIVE_GROUPS.discard(pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


class Capture:
    """Collects one output stream: stdout keeps its head, stderr its tail, both at most ``cap`` bytes.
    Past ``cap × FLOOD_FACTOR`` bytes in all, ``flooded`` is set and further data is dropped."""

    __slots__ = ("cap", "flooded", "keep_tail", "kept", "total", "truncated")

    def __init__(self, cap: int, keep_tail: bool) -> None:
        self.cap = cap
        self.keep_tail = keep_tail
        self.kept = bytearray()
        self.total = 0
        self.truncated = False
        self.flooded = False

    def add(self, chunk: bytes) -> bool:
        """Take a chunk; return True when this chunk made the stream a flood."""
        self.total += len(chunk)
        if self.flooded:
            return False
        self.kept += chunk
        if len(self.kept) > self.cap:
            self.truncated = True
            if self.keep_tail:
                del self.kept[: len(self.kept) - self.cap]
            else:
                del self.kept[self.cap :]
        if self.total > self.cap * FLOOD_FACTOR:
            self.flooded = True
            return True
        return False


class Spawn:
    """One child to run, as plain data (a jail worker reads it off its request). ``session``: the child leads
    a session of its own (no controlling terminal); else a process group of its own, in the caller's session
    (a jail worker's, which has no terminal). Either way its group is what is killed at its end."""

    __slots__ = ("argv", "env", "max_output_bytes", "session", "stdin", "timeout_s")

    def __init__(
        self,
        argv: list[str],
        env: Mapping[str, str],
        *,
        timeout_s: float,
        max_output_bytes: int,
        stdin: bytes | None,
        session: bool = True,
    ) -> None:
        self.argv = argv
        self.env = env
        self.timeout_s = timeout_s
        self.max_output_bytes = max_output_bytes
        self.stdin = stdin
        self.session = session


class Ended:
    """How a child ended: its captured output, exit code (None: not known), whether it timed out or left
    pipes open past the grace, how long it took and the CPU time it and its reaped children used."""

    __slots__ = ("cpu_s", "duration_s", "exit_code", "lost_pipes", "stderr", "stdout", "timed_out")

    def __init__(
        self,
        stdout: Capture,
        stderr: Capture,
        *,
        exit_code: int | None,
        timed_out: bool,
        lost_pipes: bool,
        duration_s: float,
        cpu_s: float | None,
    ) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.exit_code = exit_code
        self.timed_out = timed_out
        self.lost_pipes = lost_pipes
        self.duration_s = duration_s
        self.cpu_s = cpu_s


def ending_error(
    *,
    stdout: Capture,
    stderr: Capture,
    exit_code: int | None,
    timed_out: bool,
    lost_pipes: bool,
    timeout_s: float,
) -> str | None:
    """The one-line reason a child did not run to a normal exit, in order of what explains it best."""
    flood = max(stdout.total, stderr.total) if (stdout.flooded or stderr.flooded) else 0
    if timed_out:
        return f"timed out after {timeout_s:g}s"
    if lost_pipes:
        return "a child process kept the output pipes open after exit; output lost"
    if flood:
        return f"output flood: more than {flood} bytes; process killed"
    if exit_code is not None and exit_code < 0:
        return f"killed by signal {signal.Signals(-exit_code).name}"
    return None


Started = tuple[int, int, int, int, int]  # pid, pidfd, our ends of stdout, stderr, stdin (or -1)
# Our ends of the pipes, then the child's: stdout, stderr, stdin (or -1).
Pipes = tuple[tuple[int, int, int], tuple[int, int, int]]


def pipes(spawn: Spawn) -> Pipes:
    """The child's stdout, stderr and (when it is fed) stdin: our ends, then the child's."""
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    in_r, in_w = os.pipe2(os.O_CLOEXEC) if spawn.stdin is not None else (-1, -1)
    return (out_r, err_r, in_w), (out_w, err_w, in_r)


def launch(
    spawn: Spawn, ends: tuple[int, int, int], posix_spawn: Callable[..., int] | None = None
) -> tuple[int, int] | str:
    """Spawn the child on its ``ends`` of the pipes (from :func:`pipes`; the caller closes them after): its pid
    and pidfd, or why it could not start. ``posix_spawn`` replaces ``os.posix_spawn`` (same arguments, with
    ``setsid`` true or false)."""
    out_w, err_w, in_r = ends
    actions: list[tuple[int, int, int] | tuple[int, int, str, int, int]] = [
        (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2),
    ]
    if in_r >= 0:
        actions.append((os.POSIX_SPAWN_DUP2, in_r, 0))
    else:
        actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
    pid: int | None = None
    try:
        # A new session is a new scheduling group where the kernel groups tasks by session (autogroup): making
        # one costs the child a millisecond or more before it runs. Where the caller's session has no terminal
        # to keep the child from (a jail worker's; assay's own without one), a process group of its own does.
        if posix_spawn is not None:
            pid = posix_spawn(
                spawn.argv[0], spawn.argv, spawn.env, file_actions=actions, setsid=spawn.session
            )
        elif spawn.session:
            pid = os.posix_spawn(spawn.argv[0], spawn.argv, spawn.env, file_actions=actions, setsid=True)
        else:
            pid = os.posix_spawn(spawn.argv[0], spawn.argv, spawn.env, file_actions=actions, setpgroup=0)
        LIVE_GROUPS.add(pid)
        return pid, os.pidfd_open(pid)
    except OSError as exc:
        if pid is not None:
            kill_group(pid)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        return f"could not start process: {exc}"


def start(spawn: Spawn, posix_spawn: Callable[..., int] | None = None) -> Started | str:
    """Spawn the child: its pid, pidfd and our ends of its pipes, or why it could not start (see
    :func:`launch`)."""
    ours, theirs = pipes(spawn)
    launched = launch(spawn, theirs, posix_spawn)
    for fd in theirs if isinstance(launched, tuple) else (*ours, *theirs):
        if fd >= 0:
            close(fd)
    if isinstance(launched, str):
        return launched
    return (*launched, *ours)


class Child:
    """One running child's pipes and pidfd, as :class:`Watch` (poll, in the calling thread) and the event
    loop's watch watch them; they differ in how an fd stops being watched."""

    def __init__(self, spawn: Spawn, started: Started) -> None:
        self.pid, self.pidfd, out_r, err_r, self.in_w = started
        self.stdout = Capture(spawn.max_output_bytes, keep_tail=False)
        self.stderr = Capture(spawn.max_output_bytes, keep_tail=True)
        self.captures = {out_r: self.stdout, err_r: self.stderr}
        self.pending = memoryview(spawn.stdin or b"")
        if self.in_w >= 0:
            os.set_blocking(self.in_w, False)
        self.exit_code: int | None = None
        self.cpu_s: float | None = None
        self.exited = False

    def _unwatch(self, fd: int) -> None:
        raise NotImplementedError

    def _reap(self, wait: int = 0) -> None:
        """Reap the exited child (with ``os.WNOHANG``: if it has exited; ``exited`` says whether it had)."""
        try:
            pid, status, usage = os.wait4(self.pid, wait)
        except ChildProcessError:  # reaped by someone else (a waitpid(-1) child watcher)
            pid, status, usage = self.pid, None, None
        if pid == 0:
            return
        self._unwatch(self.pidfd)
        close(self.pidfd)
        if status is not None and usage is not None:
            self.exit_code = os.waitstatus_to_exitcode(status)
            self.cpu_s = usage.ru_utime + usage.ru_stime
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
        close(fd)
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
            close(self.in_w)
            self.in_w = -1

    def close_pipes(self) -> None:
        for fd in list(self.captures):
            self._unwatch(fd)
            close(fd)
        self.captures.clear()


class Watch(Child):
    """A child polled by the thread that runs it."""

    def __init__(self, spawn: Spawn, started: Started) -> None:
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


def watch(spawn: Spawn, kill: Callable[[int], None] = kill_group) -> Ended | str:
    """Run ``spawn`` to the end in this thread (blocking): spawn, feed stdin, capture output, enforce the
    timeout and the flood limit, ``kill`` the process group (a jail worker kills its whole namespace), reap.
    Why it could not start, when it could not."""
    begun = time.perf_counter()
    started = start(spawn)
    if isinstance(started, str):
        return started
    child = Watch(spawn, started)
    deadline = begun + spawn.timeout_s
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
    return Ended(
        child.stdout,
        child.stderr,
        exit_code=child.exit_code,
        timed_out=timed_out,
        lost_pipes=lost_pipes,
        duration_s=time.perf_counter() - begun,
        cpu_s=child.cpu_s,
    )
