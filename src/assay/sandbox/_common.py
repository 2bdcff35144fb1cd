"""Shared pieces of both process back ends: limits, results, the environment, output capture."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Past cap × this many bytes the process is killed: it would only burn time until the timeout.
FLOOD_FACTOR = 8
READ_CHUNK = 65536
# A grandchild that left the process group can hold a pipe open; this long after exit we stop reading.
PIPE_GRACE_S = 2.0


@dataclass(frozen=True)
class SandboxLimits:
    """Limits for one untrusted process. ``env_allow`` names variables (or patterns) passed besides the base
    allow-list (see :mod:`assay.sandbox._env`)."""

    timeout_s: float = 60.0
    max_output_bytes: int = 1_000_000
    memory_mb: int | None = 4096
    env_allow: tuple[str, ...] = ()


@dataclass
class ProcessResult:
    """What one process did. ``error`` is a one-line reason when it did not run to a normal exit.
    ``cpu_s`` is the CPU time (user + system) of the process and of the children it waited for, which load
    on the machine leaves nearly unchanged (None: not measured, as by the portable back end)."""

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int | None = None
    timed_out: bool = False
    truncated: bool = False
    duration_s: float = 0.0
    error: str | None = None
    cpu_s: float | None = None
    meta: dict[str, object] = field(default_factory=dict)


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


def shell_argv(command: str | Sequence[str], *, cwd: str | Path | None, memory_mb: int | None) -> list[str]:
    """The /bin/sh argv that enters ``cwd``, sets the address-space limit and runs ``command``.

    The shell sets the limit: a preexec_fn would force a full fork() of this process instead of vfork
    (several times slower per case), and setting it from the parent after the spawn races the child.
    """
    lines = []
    if cwd is not None:
        lines.append(f"cd -- {shlex.quote(os.fspath(cwd))} || exit 126")
    if memory_mb:
        lines.append(f"ulimit -v {memory_mb * 1024}")
    prelude = "\n".join(lines)
    if isinstance(command, str):
        return ["/bin/sh", "-c", f"{prelude}\n{command}" if prelude else command]
    return ["/bin/sh", "-c", f'{prelude}\nexec "$@"' if prelude else 'exec "$@"', "assay-sandbox", *command]


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


def finish(
    *,
    stdout: Capture,
    stderr: Capture,
    exit_code: int | None,
    timed_out: bool,
    lost_pipes: bool,
    limits: SandboxLimits,
    duration_s: float,
    cpu_s: float | None = None,
) -> ProcessResult:
    """The result and its one-line error, in order of what explains the outcome best."""
    result = ProcessResult(
        stdout=b"" if lost_pipes else bytes(stdout.kept),
        stderr=b"" if lost_pipes else bytes(stderr.kept),
        exit_code=exit_code,
        timed_out=timed_out,
        truncated=stdout.truncated or stderr.truncated,
        duration_s=duration_s,
        cpu_s=cpu_s,
    )
    flood = max(stdout.total, stderr.total) if (stdout.flooded or stderr.flooded) else 0
    if timed_out:
        result.error = f"timed out after {limits.timeout_s:g}s"
    elif lost_pipes:
        result.error = "a child process kept the output pipes open after exit; output lost"
    elif flood:
        result.error = f"output flood: more than {flood} bytes; process killed"
    elif exit_code is not None and exit_code < 0:
        result.error = f"killed by signal {signal.Signals(-exit_code).name}"
    return result


def describe_exit(code: int) -> str:
    """``exit code N``; for 129-159 also the signal the shell reports for a child it lost that way."""
    if 128 < code < 160:
        with contextlib.suppress(ValueError):
            return f"exit code {code} (a child was killed by {signal.Signals(code - 128).name})"
    return f"exit code {code}"


def findable(program: str, cwd: str | Path | None, path: str | None) -> bool:
    """Whether ``program`` can be executed (relative paths resolve against ``cwd``)."""
    if "/" in program:
        return os.access(Path(cwd or ".") / program, os.X_OK)
    return shutil.which(program, path=path) is not None


# Process groups of the untrusted processes running now, so that a SIGTERM or SIGHUP to assay can end them
# (see :func:`assay.sandbox.install_cleanup`).
LIVE_GROUPS: set[int] = set()


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (the child runs in a session of its own)."""
    LIVE_GROUPS.discard(pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
