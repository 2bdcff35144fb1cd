"""Run untrusted commands: own process group, time and memory limits, capped output, scrubbed environment."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
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


_PIDFD_USABLE: bool | None = None


def use_pidfd_child_watcher(loop: asyncio.AbstractEventLoop) -> None:
    """On Python 3.11, asyncio waits for each child in a thread of its own (ThreadedChildWatcher); a pidfd
    watcher waits in the event loop instead, which is what 3.12+ does by default and is measurably cheaper per
    case. Used only where the kernel supports pidfds; attached to whichever loop is running."""
    global _PIDFD_USABLE
    if sys.version_info >= (3, 12):
        return
    if _PIDFD_USABLE is None:
        try:
            os.close(os.pidfd_open(os.getpid()))
            _PIDFD_USABLE = True
        except (AttributeError, OSError):
            _PIDFD_USABLE = False
    if not _PIDFD_USABLE:
        return
    watcher = asyncio.get_child_watcher()
    if isinstance(watcher, asyncio.ThreadedChildWatcher):
        watcher = asyncio.PidfdChildWatcher()
        asyncio.set_child_watcher(watcher)
    if isinstance(watcher, asyncio.PidfdChildWatcher) and not watcher.is_active():
        watcher.attach_loop(loop)


def _findable(program: str, cwd: str | Path | None, path: str | None) -> bool:
    if "/" in program:
        return os.access(Path(cwd or ".") / program, os.X_OK)
    return shutil.which(program, path=path) is not None


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _environment_prelude(env: Mapping[str, str]) -> str | None:
    """Shell lines that turn this process's environment into ``env`` (unset the scrubbed variables, export
    the added ones), or None when some name is not a shell identifier.

    Inheriting the environment and adjusting it in the shell is cheaper than handing Popen a full dict,
    which re-encodes every variable for every case."""
    removed = [name for name in os.environ if name not in env]
    changed = {name: value for name, value in env.items() if os.environ.get(name) != value}
    if not all(_NAME.fullmatch(name) for name in (*removed, *changed)):
        return None
    lines = []
    if removed:
        lines.append("unset " + " ".join(removed))
    lines.extend(f"export {name}={shlex.quote(value)}" for name, value in changed.items())
    return "\n".join(lines)


_PRELUDES: dict[int, tuple[Mapping[str, str], object, str | None]] = {}


def _cached_prelude(env: Mapping[str, str]) -> str | None:
    """``_environment_prelude`` memoised per env mapping, recomputed whenever this process's environment
    changed (compared on the raw bytes, which costs far less than decoding every variable per case)."""
    current = tuple(getattr(os.environ, "_data", os.environ).items())
    hit = _PRELUDES.get(id(env))
    if hit is not None and hit[0] is env and hit[1] == current:
        return hit[2]
    if len(_PRELUDES) > 64:
        _PRELUDES.clear()
    prelude = _environment_prelude(env)
    _PRELUDES[id(env)] = (env, current, prelude)
    return prelude


def _wrap(command: str | Sequence[str], prelude: str) -> list[str]:
    """The argv that runs ``command`` after ``prelude`` (environment and limits) in /bin/sh.

    The memory limit is set by the shell: a preexec_fn would force a full fork() of this process instead of
    vfork (several times slower per case), and setting it from the parent after the spawn races the child."""
    if isinstance(command, str):
        return ["/bin/sh", "-c", f"{prelude}\n{command}" if prelude else command]
    if not prelude:
        return list(command)
    return ["/bin/sh", "-c", f'{prelude}\nexec "$@"', "assay-sandbox", *command]


async def _drain(
    stream: asyncio.StreamReader,
    cap: int,
    keep_tail: bool,
    state: dict[str, object],
    signal_done: Callable[[str], None],
) -> bytes:
    kept = bytearray()
    total = 0
    while chunk := await stream.read(READ_CHUNK):
        total += len(chunk)
        if "flood" in state:
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
            signal_done("flood")
    return bytes(kept)


async def _feed(pipe: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        pipe.write(data)
        await pipe.drain()
    pipe.close()


class _ExitAwareProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Signals process exit at once; ``Process.wait`` only returns once every pipe is closed as well, which
    a leftover child holding stdout can delay forever."""

    def __init__(
        self, limit: int, loop: asyncio.AbstractEventLoop, signal_done: Callable[[str], None]
    ) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()
        self.signal_done = signal_done

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set_result(None)
        self.signal_done("exit")


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
    full_env = env if env is not None else scrubbed_env(limits.env_allow)
    if not isinstance(command, str) and not _findable(command[0], cwd, full_env.get("PATH")):
        return ProcessResult(error=f"could not start process: command not found: {command[0]}")
    env_prelude = _cached_prelude(full_env)
    prelude = "\n".join(
        line
        for line in (env_prelude, f"ulimit -v {limits.memory_mb * 1024}" if limits.memory_mb else None)
        if line
    )
    loop = asyncio.get_running_loop()
    use_pidfd_child_watcher(loop)
    # One future for "stop waiting": the process exited, flooded its output, or ran out of time.
    done: asyncio.Future[str] = loop.create_future()

    def signal_done(reason: str) -> None:
        if not done.done():
            done.set_result(reason)

    try:
        transport, protocol = await loop.subprocess_exec(
            lambda: _ExitAwareProtocol(READ_CHUNK, loop, signal_done),
            *_wrap(command, prelude),
            cwd=str(cwd) if cwd else None,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=None if env_prelude is not None else dict(full_env),
            start_new_session=True,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return ProcessResult(error=f"could not start process: {exc}", duration_s=time.perf_counter() - start)
    proc = asyncio.subprocess.Process(transport, protocol, loop)
    timer = loop.call_later(limits.timeout_s, signal_done, "timeout")

    state: dict[str, object] = {}
    assert proc.stdout is not None and proc.stderr is not None
    out_task = asyncio.ensure_future(_drain(proc.stdout, limits.max_output_bytes, False, state, signal_done))
    err_task = asyncio.ensure_future(_drain(proc.stderr, limits.max_output_bytes, True, state, signal_done))
    feeder = None
    if stdin is not None and proc.stdin is not None:
        # Fed in the background: a process that never reads its stdin must still meet its timeout.
        feeder = asyncio.ensure_future(_feed(proc.stdin, stdin))

    timed_out = await done == "timeout"
    timer.cancel()
    if feeder is not None:
        feeder.cancel()
    # Ends children that outlive the main process too: they would hold the pipes open.
    _kill_group(proc)
    await protocol.exited
    finished, _ = await asyncio.wait((out_task, err_task), timeout=2.0)
    if len(finished) == 2:
        stdout, stderr = out_task.result(), err_task.result()
    else:  # a grandchild escaped the process group and keeps a pipe open
        out_task.cancel()
        err_task.cancel()
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
