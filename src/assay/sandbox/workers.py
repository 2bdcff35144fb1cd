"""Jail workers: one long-lived bubblewrap sandbox per concurrency slot and jail, running case after case.

Starting a jail costs more than most cases (new namespaces, a dozen mounts); a worker pays that once. It is
:mod:`assay.sandbox._jail_worker` run inside the same jail a case would get (same binds, same namespaces,
``/`` and ``/dev`` read-only besides, and a private ``/dev/shm``), taking one case at a time over a pipe and
running it as a child in a session of its own, under the same limits as ``run_process``. After every case it
kills every other process of its PID namespace and empties its private ``/tmp``, ``/dev/shm`` and ``$HOME``,
so a case finds nothing of the one before. A case cannot signal its worker (it is the jail's PID 1) nor reach
its pipes. When the worker dies, hangs or finds something it cannot undo, that case fails with the reason (or,
for what it cannot undo, only the worker goes) and the next one gets a fresh worker; so does a case whose
jail's mounts no longer match the tree (a masked or read-only path that appeared, or was replaced, outside).
Workers are shut down when their jail is released (:meth:`JailWorkers.close`, at the end of an evaluation).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import select
import signal
import stat
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Collection, Mapping
from pathlib import Path

from assay.sandbox._common import LIVE_GROUPS, ProcessResult, SandboxLimits, describe_exit, kill_group
from assay.sandbox._spawn import _watchers
from assay.sandbox.jail import BwrapStatus, Jail, interpreter_paths, jail_argv

WORKER = Path(__file__).with_name("_jail_worker.py")
# Beyond a case's own timeout, how long a worker may take to start, clean up and answer.
ANSWER_GRACE_S = 10.0
STOP_WAIT_S = 2.0
# Jails whose idle workers are kept (a runner that moves from tree to tree does not keep a jail per tree).
KEPT_JAILS = 4
LENGTH = struct.Struct(">I")
READ_CHUNK = 1 << 16


class WorkerFailed(Exception):
    """The worker gave no valid answer (it died, hung or broke the protocol); the message says how."""

    def __init__(self, reason: str, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.timed_out = timed_out


def worker_argv(jail: Jail, home: str | None, status: BwrapStatus) -> tuple[list[str], list[str]]:
    """The command line that starts a worker for ``jail``, and the private directories it empties."""
    size = ["--size", str(jail.tmp_mb * 2**20)] if status.tmpfs_size else []
    bwrap = jail_argv(jail.with_paths(readable=interpreter_paths()), home=home, status=status)[:-1]
    dirs = ["/tmp", "/dev/shm"]
    if home and any(a == "--tmpfs" and b == home for a, b in itertools.pairwise(bwrap)):
        dirs.append(home)
    # Read-only / and /dev: what a case writes there would outlive it, with no list of what to remove.
    bwrap += [*size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev", "--remount-ro", "/", "--as-pid-1", "--"]
    return [*bwrap, sys.executable, "-I", "-S", str(WORKER), *dirs], dirs


class JailWorker:
    """One worker (a ``bwrap`` process leading a session of its own) and its pipes. It starts on its first
    :meth:`exchange`, in a watcher thread: those threads last as long as assay, and ``--die-with-parent``
    ends the jail when the thread that started it ends."""

    def __init__(self, argv: list[str], env: Mapping[str, str]) -> None:
        self.argv = argv
        self.env = dict(env)
        self.proc: subprocess.Popen[bytes] | None = None
        self.killed = False
        self.lock = threading.Lock()

    def _start(self) -> subprocess.Popen[bytes]:
        with self.lock:
            if self.killed:
                raise WorkerFailed("the jail's worker was stopped before the case began")
            if self.proc is None:
                try:
                    self.proc = subprocess.Popen(
                        self.argv,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        env=self.env,
                        start_new_session=True,
                    )
                except OSError as exc:
                    raise WorkerFailed(f"could not start the jail's worker: {exc}") from None
                LIVE_GROUPS.add(self.proc.pid)
                for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                    assert pipe is not None
                    os.set_blocking(pipe.fileno(), False)
            return self.proc

    def exchange(self, request: bytes, deadline: float) -> tuple[dict[str, object], bytes, bytes]:
        """Send one request and wait (blocking, in a watcher thread) for its reply until ``deadline``
        (``time.monotonic``). Raises WorkerFailed."""
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        requests, replies = proc.stdin.fileno(), proc.stdout.fileno()
        poller = select.poll()
        poller.register(requests, select.POLLOUT)
        poller.register(replies, select.POLLIN)
        pending = memoryview(request)
        received = bytearray()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerFailed("the jail's worker did not answer in time; it was killed", timed_out=True)
            for fd, events in poller.poll(int(remaining * 1000) + 1):
                if fd == requests:
                    try:
                        pending = pending[os.write(fd, pending[:READ_CHUNK]) :]
                    except BlockingIOError:
                        continue
                    except OSError:
                        raise WorkerFailed(self.death()) from None
                    if not pending:
                        poller.unregister(fd)
                    continue
                chunk = os.read(fd, READ_CHUNK) if events & select.POLLIN else b""
                if not chunk:
                    raise WorkerFailed(self.death())
                received += chunk
            if (reply := _parse(received)) is not None:
                return reply

    def death(self) -> str:
        """Why the worker stopped answering, with the evidence it left (exit status, first stderr line)."""
        assert self.proc is not None and self.proc.stderr is not None
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(STOP_WAIT_S)
        try:
            stderr = self.proc.stderr.read(READ_CHUNK) or b""
        except OSError:
            stderr = b""
        lines = stderr.decode("utf-8", "replace").strip().splitlines() or [""]
        if lines[0].startswith("bwrap: "):
            return f"the sandbox could not be set up: {lines[0]}"
        code = self.proc.returncode
        if code is None:
            status = "still running"
        elif 128 < code < 160 or code < 0:  # bwrap reports its child's death by a signal as 128 + signal
            status = f"killed by {signal.Signals(code - 128 if code > 0 else -code).name}"
        else:
            status = describe_exit(code)
        return f"the jail's worker died during the case ({status}{'; ' + lines[-1] if lines[-1] else ''})"

    def kill(self) -> None:
        """SIGKILL the worker (its whole jail dies with it: ``--die-with-parent``), or keep it from starting."""
        with self.lock:
            self.killed = True
            if self.proc is not None:
                kill_group(self.proc.pid)

    def stop(self) -> None:
        """End the worker (blocking): close its requests so it exits, then kill it, reap it."""
        with self.lock:
            self.killed = True
            proc = self.proc
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.stdin.close()  # type: ignore[union-attr]
        try:
            proc.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            proc.wait()
        LIVE_GROUPS.discard(proc.pid)
        for pipe in (proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]


def _parse(received: bytearray) -> tuple[dict[str, object], bytes, bytes] | None:
    """The complete reply in ``received``, or None while it is incomplete. Raises WorkerFailed."""
    if len(received) < LENGTH.size:
        return None
    size = LENGTH.unpack_from(received)[0]
    if len(received) < LENGTH.size + size:
        return None
    try:
        header = json.loads(received[LENGTH.size : LENGTH.size + size])
        out_len, err_len = int(header["stdout_len"]), int(header["stderr_len"])
    except (ValueError, KeyError, TypeError):
        raise WorkerFailed("the jail's worker sent a malformed reply") from None
    start = LENGTH.size + size
    if len(received) < start + out_len + err_len:
        return None
    if len(received) > start + out_len + err_len:
        raise WorkerFailed("the jail's worker sent more than one reply")
    return header, bytes(received[start : start + out_len]), bytes(received[start + out_len :])


def _request(argv: list[str], env: Mapping[str, str], limits: SandboxLimits, stdin: bytes | None) -> bytes:
    header = json.dumps(
        {
            "argv": argv,
            "env": dict(env),
            "timeout_s": limits.timeout_s,
            "max_output_bytes": limits.max_output_bytes,
            "stdin_len": -1 if stdin is None else len(stdin),
        }
    ).encode()
    return LENGTH.pack(len(header)) + header + (stdin or b"")


def _result(header: dict[str, object], stdout: bytes, stderr: bytes) -> ProcessResult:
    exit_code = header.get("exit_code")
    error = header.get("error")
    return ProcessResult(
        stdout=stdout,
        stderr=stderr,
        exit_code=exit_code if isinstance(exit_code, int) else None,
        timed_out=header.get("timed_out") is True,
        truncated=header.get("truncated") is True,
        duration_s=float(header.get("duration_s") or 0.0),  # type: ignore[arg-type]
        error=error if isinstance(error, str) else None,
    )


# The jail, $HOME, and what its paths are now (a worker's mounts follow what existed when it started).
_Key = tuple[Jail, str | None, tuple[int | None, ...]]


def _layout(jail: Jail) -> tuple[int | None, ...]:
    """The kind of file (or None: missing) at each path of ``jail`` that its mounts depend on: a file that
    appears where a hidden or read-only one was missing needs a jail that masks it or shows it read-only."""
    kinds: list[int | None] = []
    for path in (*jail.writable, *jail.read_only, *jail.hidden):
        try:
            kinds.append(stat.S_IFMT(os.lstat(path).st_mode))
        except OSError:
            kinds.append(None)
    return tuple(kinds)


class JailWorkers:
    """The workers of one runner: idle ones kept per jail, a new one started when none is free (so there are
    as many as cases run at once). ``answer_grace_s``: how long past a case's timeout a worker may take to
    answer before it is killed. Use from one event loop; close with :meth:`close`."""

    def __init__(self, answer_grace_s: float = ANSWER_GRACE_S) -> None:
        self.answer_grace_s = answer_grace_s
        self._idle: dict[_Key, list[JailWorker]] = {}
        self._busy: dict[JailWorker, _Key] = {}
        self._closed: set[_Key] = set()
        self._recent: dict[_Key, None] = {}  # insertion order: least recently used first

    async def run(
        self,
        argv: list[str],
        *,
        env: Mapping[str, str],
        limits: SandboxLimits,
        stdin: bytes | None,
        jail: Jail,
        home: str | None,
        status: BwrapStatus,
    ) -> ProcessResult:
        """Run ``argv`` (from ``shell_argv``) with ``env`` in a worker of ``jail``; as ``run_process`` would,
        never raising for the process's sake."""
        key = (jail, home, _layout(jail))
        self._use(key)
        request = _request(argv, env, limits, stdin)
        start = time.monotonic()
        for _ in range(2):  # a stale worker answers at once, without running the case: once more, fresh
            result = await self._run_once(key, request, limits, status, start)
            if result is not None:
                return result
        return ProcessResult(error="the jail's worker kept finding its mounts changed")

    async def _run_once(
        self, key: _Key, request: bytes, limits: SandboxLimits, status: BwrapStatus, start: float
    ) -> ProcessResult | None:
        idle = self._idle.get(key)
        worker = idle.pop() if idle else JailWorker(worker_argv(key[0], key[1], status)[0], _worker_env())
        self._busy[worker] = key
        deadline = start + limits.timeout_s + self.answer_grace_s
        loop = asyncio.get_running_loop()
        keep = False
        try:
            header, stdout, stderr = await loop.run_in_executor(
                _watchers(), worker.exchange, request, deadline
            )
            if header.get("stale"):
                return None
            keep = header.get("dirty") is None
            return _result(header, stdout, stderr)
        except WorkerFailed as exc:
            return ProcessResult(
                error=f"timed out after {limits.timeout_s:g}s ({exc})" if exc.timed_out else str(exc),
                timed_out=exc.timed_out,
                duration_s=time.monotonic() - start,
            )
        finally:
            del self._busy[worker]
            if keep and key not in self._closed:
                self._idle.setdefault(key, []).append(worker)
            else:
                worker.kill()
                loop.run_in_executor(_watchers(), worker.stop)

    def _use(self, key: _Key) -> None:
        """Note ``key`` as the latest jail used; retire the jails used least recently past ``KEPT_JAILS``."""
        self._closed.discard(key)
        self._recent.pop(key, None)
        self._recent[key] = None
        while len(self._recent) > KEPT_JAILS:
            old = next(iter(self._recent))
            del self._recent[old]
            self._retire([old])

    def _retire(self, keys: Collection[_Key]) -> list[asyncio.Future[None]]:
        """Mark ``keys`` closed (busy workers stop when their case ends) and stop their idle workers: the
        futures of their ends."""
        self._closed.update(keys)
        loop = asyncio.get_running_loop()
        ends = []
        for worker in [w for k in keys for w in self._idle.pop(k, [])]:
            worker.kill()
            ends.append(loop.run_in_executor(_watchers(), worker.stop))
        return ends

    async def close(self, workdir: Path | None = None) -> None:
        """Stop the idle workers of the jails that write ``workdir`` (of every jail when None); busy ones
        stop when their case ends."""
        root = Path(os.path.realpath(workdir)) if workdir is not None else None
        keys = {*self._idle, *self._busy.values()}
        chosen = [k for k in keys if root is None or root in k[0].writable]
        for key in chosen:
            self._recent.pop(key, None)
        await asyncio.gather(*self._retire(chosen))


def _worker_env() -> dict[str, str]:
    """The worker's own environment (each case gets its own): nothing of assay's."""
    return {"PATH": os.defpath}
