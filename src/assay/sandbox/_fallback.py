"""The portable back end: asyncio subprocesses (used where posix_spawn or pidfds are missing, e.g. macOS)."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
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


class _ExitAwareProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Signals the exit at once; ``Process.wait`` returns only once every pipe is closed as well, which a
    leftover child holding stdout can delay forever."""

    def __init__(self, loop: asyncio.AbstractEventLoop, done: asyncio.Future[str]) -> None:
        super().__init__(limit=READ_CHUNK, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()
        self.done = done

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set_result(None)
        _settle(self.done, "exit")


def _settle(done: asyncio.Future[str], reason: str) -> None:
    """The first reason to stop wins; later ones are dropped."""
    if not done.done():
        done.set_result(reason)


async def _drain(stream: asyncio.StreamReader, capture: Capture, done: asyncio.Future[str]) -> None:
    while chunk := await stream.read(READ_CHUNK):
        if capture.add(chunk):
            _settle(done, "flood")


async def _feed(pipe: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        pipe.write(data)
        await pipe.drain()
    pipe.close()


async def run(
    argv: list[str], *, env: Mapping[str, str], limits: SandboxLimits, stdin: bytes | None
) -> ProcessResult:
    """Spawn ``argv`` (a /bin/sh command line from ``shell_argv``) and watch it until done."""
    start = time.perf_counter()
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str] = loop.create_future()
    try:
        transport, protocol = await loop.subprocess_exec(
            lambda: _ExitAwareProtocol(loop, done),
            *argv,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env),
            start_new_session=True,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return ProcessResult(error=f"could not start process: {exc}", duration_s=time.perf_counter() - start)
    proc = asyncio.subprocess.Process(transport, protocol, loop)
    LIVE_GROUPS.add(proc.pid)
    stdout = Capture(limits.max_output_bytes, keep_tail=False)
    stderr = Capture(limits.max_output_bytes, keep_tail=True)
    assert proc.stdout is not None and proc.stderr is not None
    readers = (
        asyncio.ensure_future(_drain(proc.stdout, stdout, done)),
        asyncio.ensure_future(_drain(proc.stderr, stderr, done)),
    )
    feeder = asyncio.ensure_future(_feed(proc.stdin, stdin)) if stdin is not None and proc.stdin else None
    timer = loop.call_later(limits.timeout_s, _settle, done, "timeout")
    try:
        timed_out = await done == "timeout"
    finally:
        timer.cancel()
        if feeder is not None:
            feeder.cancel()
        kill_group(proc.pid)
    await protocol.exited
    finished, _ = await asyncio.wait(readers, timeout=PIPE_GRACE_S)
    lost_pipes = len(finished) < len(readers)
    for reader in readers:
        reader.cancel()
    transport.close()
    return finish(
        stdout=stdout,
        stderr=stderr,
        exit_code=transport.get_returncode(),
        timed_out=timed_out,
        lost_pipes=lost_pipes,
        limits=limits,
        duration_s=time.perf_counter() - start,
    )
