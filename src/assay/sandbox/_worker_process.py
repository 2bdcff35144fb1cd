"""One jail worker seen from assay: the ``bwrap`` command line that starts it, the process and its pipes,
and the wire format (see :mod:`assay.sandbox._jail_worker` for the side inside the jail)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from assay.sandbox._common import LIVE_GROUPS, ProcessResult, SandboxLimits, describe_exit, kill_group
from assay.sandbox.jail import BwrapStatus, Jail, interpreter_paths, jail_argv

WORKER = Path(__file__).with_name("_jail_worker.py")
# Threads that start, stop and examine workers: more than this many at once queue; a thread only exists once
# that many were busy at once, and it lasts as long as assay (see JailWorker).
MAX_THREADS = 1024
_pool: tuple[int, ThreadPoolExecutor] | None = None
_pool_lock = threading.Lock()
STOP_WAIT_S = 2.0
LENGTH = struct.Struct(">I")
READ_CHUNK = 1 << 16


def worker_threads() -> ThreadPoolExecutor:
    """The shared pool of threads for the workers' blocking steps (made again in a forked child, where the
    parent's threads do not exist)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="assay-worker"))
        return _pool[1]


class WorkerFailed(Exception):
    """The worker gave no valid answer (it died, hung or broke the protocol); the message says how."""

    def __init__(self, reason: str, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.timed_out = timed_out


def worker_argv(jail: Jail, home: str | None, status: BwrapStatus) -> list[str]:
    """The command line that starts a worker for ``jail``; it names the private directories to empty."""
    size = ["--size", str(jail.tmp_mb * 2**20)] if status.tmpfs_size else []
    bwrap = jail_argv(jail.with_paths(readable=interpreter_paths()), home=home, status=status)[:-1]
    dirs = ["/tmp", "/dev/shm"]
    if home and any(a == "--tmpfs" and b == home for a, b in itertools.pairwise(bwrap)):
        dirs.append(home)
    # Read-only / and /dev: what a case writes there would outlive it, with no list of what to remove.
    bwrap += [*size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev", "--remount-ro", "/", "--as-pid-1", "--"]
    return [*bwrap, sys.executable, "-I", "-S", str(WORKER), *dirs]


class JailWorker:
    """One worker (a ``bwrap`` process leading a session of its own) and its pipes. It starts on its first
    :meth:`exchange`, in a thread of :func:`worker_threads`: those threads last as long as assay, and
    ``--die-with-parent`` ends the jail when the thread that started it ends. Its exchanges run on the event
    loop."""

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

    async def exchange(self, request: bytes, deadline: float) -> tuple[dict[str, object], bytes, bytes]:
        """Send one request and wait for its reply until ``deadline`` (``time.monotonic``), the pipes watched
        by the running event loop. Raises WorkerFailed."""
        loop = asyncio.get_running_loop()
        proc = self.proc
        if proc is None:
            # Started in a thread of the pool: --die-with-parent ends the jail with the thread that started it,
            # and those threads last as long as assay (an event loop's thread may not).
            proc = await loop.run_in_executor(worker_threads(), self._start)
        assert proc.stdin is not None and proc.stdout is not None
        requests, replies = proc.stdin.fileno(), proc.stdout.fileno()
        answer: asyncio.Future[tuple[dict[str, object], bytes, bytes] | None] = loop.create_future()
        pending = memoryview(request)
        received = bytearray()
        writing = False  # whether the loop watches the requests pipe (only for what a first write left)

        def settle(
            result: tuple[dict[str, object], bytes, bytes] | None = None, error: Exception | None = None
        ) -> None:
            if answer.done():
                return
            if error is not None:
                answer.set_exception(error)
            else:
                answer.set_result(result)

        def write() -> None:
            nonlocal pending
            try:
                pending = pending[os.write(requests, pending[:READ_CHUNK]) :]
            except BlockingIOError:
                return
            except OSError:
                pending = pending[:0]
                settle()  # the worker is gone: None, and death() says how
            if not pending and writing:
                loop.remove_writer(requests)

        def read() -> None:
            try:
                chunk = os.read(replies, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                settle()
                return
            received.extend(chunk)
            try:
                reply = _parse(received)
            except WorkerFailed as exc:
                settle(error=exc)
                return
            if reply is not None:
                settle(reply)

        loop.add_reader(replies, read)
        write()  # a request fits the pipe: it is written at once, unless the worker is gone
        if pending:
            writing = True
            loop.add_writer(requests, write)
        timer = loop.call_at(
            loop.time() + max(0.0, deadline - time.monotonic()),
            lambda: settle(
                error=WorkerFailed("the jail's worker did not answer in time; it was killed", timed_out=True)
            ),
        )
        try:
            reply = await answer
        finally:
            timer.cancel()
            loop.remove_reader(replies)
            if writing:
                loop.remove_writer(requests)
        if reply is None:
            raise WorkerFailed(await loop.run_in_executor(worker_threads(), self.death))
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


def encode_request(
    argv: list[str], env: Mapping[str, str], limits: SandboxLimits, stdin: bytes | None
) -> bytes:
    """One request: the shell argv, the environment, the limits the worker enforces, the stdin bytes."""
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


def decode_result(header: dict[str, object], stdout: bytes, stderr: bytes) -> ProcessResult:
    """The ``ProcessResult`` a reply describes."""
    exit_code = header.get("exit_code")
    error = header.get("error")
    cpu_s = header.get("cpu_s")
    return ProcessResult(
        stdout=stdout,
        stderr=stderr,
        exit_code=exit_code if isinstance(exit_code, int) else None,
        timed_out=header.get("timed_out") is True,
        truncated=header.get("truncated") is True,
        duration_s=float(header.get("duration_s") or 0.0),  # type: ignore[arg-type]
        error=error if isinstance(error, str) else None,
        cpu_s=float(cpu_s) if isinstance(cpu_s, int | float) else None,
    )
