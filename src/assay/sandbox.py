"""Run untrusted commands: own process group, time and memory limits, capped output, scrubbed environment."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

SECRET_ENV = re.compile(
    r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|^AWS_|^OPENAI_|^ANTHROPIC_|"
    r"^GEMINI_|^GOOGLE_API|^HF_TOKEN|^GITHUB_|^GH_)",
    re.IGNORECASE,
)
FLOOD_FACTOR = (
    8  # past cap × this many bytes the process is killed: it would only burn time until the timeout
)
READ_CHUNK = 65536


@dataclass(frozen=True)
class SandboxLimits:
    """Limits for one untrusted process. ``env_allow`` lists secret-looking variables to pass through anyway."""

    timeout_s: float = 60.0
    max_output_bytes: int = 1_000_000
    memory_mb: int | None = 4096
    env_allow: tuple[str, ...] = ()


@dataclass
class ProcessResult:
    """What one process did. ``error`` is a one-line reason when it did not run to a normal exit."""

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int | None = None
    timed_out: bool = False
    truncated: bool = False
    duration_s: float = 0.0
    error: str | None = None
    meta: dict[str, object] = field(default_factory=dict)


def scrubbed_env(allow: Sequence[str] = (), extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The current environment without API keys, tokens and passwords (unless named in ``allow``)."""
    env = {k: v for k, v in os.environ.items() if k in allow or not SECRET_ENV.search(k)}
    if extra:
        env.update(extra)
    return env


def decode_output(data: bytes) -> tuple[str, bool]:
    """Decode process output as UTF-8; report whether it looked binary (NUL bytes or undecodable)."""
    binary = b"\x00" in data[:65536]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        binary = True
    if binary:
        text = text.replace("\x00", "\\x00")
    return text, binary


def _findable(program: str, cwd: str | Path | None, path: str | None) -> bool:
    if "/" in program:
        return os.access(Path(cwd or ".") / program, os.X_OK)
    return shutil.which(program, path=path) is not None


def _with_memory_limit(command: str | Sequence[str], memory_mb: int | None) -> list[str] | str:
    """Wrap ``command`` so the shell sets the address-space limit before running it.

    A preexec_fn would force a full fork() of this process instead of vfork/posix_spawn (several times slower
    per case), and setting the limit from the parent after the spawn races with the child.
    """
    if not memory_mb:
        return command if isinstance(command, str) else list(command)
    prefix = f"ulimit -v {memory_mb * 1024}"
    if isinstance(command, str):
        return ["/bin/sh", "-c", f"{prefix}\n{command}"]
    return ["/bin/sh", "-c", f'{prefix}; exec "$@"', "assay-sandbox", *command]


async def _drain(
    stream: asyncio.StreamReader, cap: int, keep_tail: bool, state: dict[str, object], flood: asyncio.Event
) -> bytes:
    kept = bytearray()
    total = 0
    while chunk := await stream.read(READ_CHUNK):
        total += len(chunk)
        if flood.is_set() and "flood" in state:
            continue  # keep reading so the pipe closes once the process group is killed
        kept += chunk
        if len(kept) > cap:
            state["truncated"] = True
            if keep_tail:
                del kept[: len(kept) - cap]
            else:
                del kept[cap:]
        if total > cap * FLOOD_FACTOR:
            state["flood"] = total
            flood.set()
    return bytes(kept)


async def _feed(pipe: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        pipe.write(data)
        await pipe.drain()
    pipe.close()


class _ExitAwareProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Signals process exit at once; ``Process.wait`` only returns once every pipe is closed as well, which
    a leftover child holding stdout can delay forever."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def run_process(
    command: str | Sequence[str],
    *,
    cwd: str | Path | None = None,
    limits: SandboxLimits = SandboxLimits(),
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> ProcessResult:
    """Run ``command`` (a shell string or an argv list) under ``limits``. Never raises for the process's sake.

    stdout keeps its first ``max_output_bytes``; stderr keeps its last ``max_output_bytes``.
    """
    start = time.perf_counter()
    full_env = dict(env) if env is not None else scrubbed_env(limits.env_allow)
    kwargs = dict(
        cwd=str(cwd) if cwd else None,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=full_env,
        start_new_session=True,
    )
    loop = asyncio.get_running_loop()

    def protocol_factory() -> _ExitAwareProtocol:
        return _ExitAwareProtocol(limit=READ_CHUNK, loop=loop)

    if not isinstance(command, str) and not _findable(command[0], cwd, full_env.get("PATH")):
        return ProcessResult(error=f"could not start process: command not found: {command[0]}")
    wrapped = _with_memory_limit(command, limits.memory_mb)
    try:
        if isinstance(wrapped, str):
            transport, protocol = await loop.subprocess_shell(protocol_factory, wrapped, **kwargs)  # type: ignore[arg-type]
        else:
            transport, protocol = await loop.subprocess_exec(protocol_factory, *wrapped, **kwargs)  # type: ignore[arg-type]
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return ProcessResult(error=f"could not start process: {exc}", duration_s=time.perf_counter() - start)
    proc = asyncio.subprocess.Process(transport, protocol, loop)

    state: dict[str, object] = {}
    flood = asyncio.Event()
    assert proc.stdout is not None and proc.stderr is not None
    out_task = asyncio.ensure_future(_drain(proc.stdout, limits.max_output_bytes, False, state, flood))
    err_task = asyncio.ensure_future(_drain(proc.stderr, limits.max_output_bytes, True, state, flood))
    feeder = None
    if stdin is not None and proc.stdin is not None:
        # Fed in the background: a process that never reads its stdin must still meet its timeout.
        feeder = asyncio.ensure_future(_feed(proc.stdin, stdin))

    exit_task = asyncio.ensure_future(protocol.exited.wait())
    flood_task = asyncio.ensure_future(flood.wait())
    done, _ = await asyncio.wait(
        {exit_task, flood_task}, timeout=limits.timeout_s, return_when=asyncio.FIRST_COMPLETED
    )
    timed_out = not done
    flood_task.cancel()
    if feeder is not None:
        feeder.cancel()
    # Ends children that outlive the main process too: they would hold the pipes open.
    _kill_group(proc)
    await protocol.exited.wait()
    exit_task.cancel()
    try:
        stdout, stderr = await asyncio.wait_for(asyncio.gather(out_task, err_task), timeout=2.0)
    except TimeoutError:  # a grandchild escaped the process group and keeps a pipe open
        stdout, stderr = b"", b""
        state["lost_pipes"] = True
    transport.close()
    result = ProcessResult(
        stdout=stdout,
        stderr=stderr,
        exit_code=transport.get_returncode(),
        timed_out=timed_out,
        truncated=bool(state.get("truncated")),
        duration_s=time.perf_counter() - start,
    )
    if timed_out:
        result.error = f"timed out after {limits.timeout_s:g}s"
    elif "lost_pipes" in state:
        result.error = "a child process kept the output pipes open after exit; output lost"
    elif "flood" in state:
        result.error = f"output flood: more than {state['flood']} bytes; process killed"
    elif result.exit_code is not None and result.exit_code < 0:
        result.error = f"killed by signal {signal.Signals(-result.exit_code).name}"
    return result
