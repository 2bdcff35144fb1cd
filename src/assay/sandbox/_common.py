"""Shared pieces of both process back ends: limits, results, the environment, output capture."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

# The child machinery shared with the jail worker lives in a module it can import alone.
from assay.sandbox._watch import (
    FLOOD_FACTOR,
    LIVE_GROUPS,
    PIPE_GRACE_S,
    READ_CHUNK,
    Capture,
    ending_error,
    kill_group,
)

__all__ = [
    "FLOOD_FACTOR",
    "LIVE_GROUPS",
    "PIPE_GRACE_S",
    "READ_CHUNK",
    "Capture",
    "ProcessResult",
    "SandboxLimits",
    "decode_output",
    "describe_exit",
    "findable",
    "finish",
    "kill_group",
    "shell_argv",
]


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


# Words the shell itself runs (keywords and builtins of POSIX sh, dash and bash, which is /bin/sh on some
# systems): a command that starts with one is not a program the shell could become, and `exec echo` would run
# /bin/echo, not the builtin, which reads differently.
_SHELL_WORDS = frozenset(
    """
    ! { } [[ case coproc do done elif else esac fi for function if in select then time until while . : [ alias
    bg bind break builtin caller cd chdir command compgen complete compopt continue declare dirs disown echo
    enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile popd
    printf pushd pwd read readarray readonly return set shift shopt source suspend test times trap true type
    typeset ulimit umask unalias unset wait
    """.split()  # noqa: SIM905 - 83 words one per line would hide the point
)
# Outside quotes, any of these may make the command line more than one simple command.
_NOT_SIMPLE = frozenset(";&|()<>`\\\n{}")
_PROGRAM = re.compile(r"[A-Za-z0-9_./+][A-Za-z0-9_./+-]*")  # not an option word: bash's exec takes some


def in_place(command: str) -> str:
    """``command`` with ``exec`` before it when it is one simple command that starts a program (no list,
    pipeline, redirection, substitution outside quotes, assignment or shell builtin, as far as a plain reading
    with quotes can tell): the shell then becomes the program instead of forking it and waiting, a process less
    per case (about 0.15 ms of CPU with ``/bin/echo``). Anything else is left as it is."""
    quote = ""
    escaped = False
    for char in command:
        if escaped:
            escaped = False
        elif quote == "'":
            quote = "" if char == "'" else quote
        elif quote == '"':
            if char == "`":
                return command
            escaped = char == "\\"
            quote = "" if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char in _NOT_SIMPLE:
            return command
    words = command.split(None, 1)
    if quote or not words or words[0] in _SHELL_WORDS or not _PROGRAM.fullmatch(words[0]):
        return command
    return f"exec {command}"


def shell_argv(command: str | Sequence[str], *, cwd: str | Path | None, memory_mb: int | None) -> list[str]:
    """The /bin/sh argv that enters ``cwd``, sets the address-space limit and runs ``command`` (in place of
    the shell where it can: :func:`in_place`).

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
        command = in_place(command)
        return ["/bin/sh", "-c", f"{prelude}\n{command}" if prelude else command]
    return ["/bin/sh", "-c", f'{prelude}\nexec "$@"' if prelude else 'exec "$@"', "assay-sandbox", *command]


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
    result.error = ending_error(
        stdout=stdout,
        stderr=stderr,
        exit_code=exit_code,
        timed_out=timed_out,
        lost_pipes=lost_pipes,
        timeout_s=limits.timeout_s,
    )
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
