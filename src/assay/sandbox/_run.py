"""``run_process``: validate, build the shell command line, pick the back end."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from assay.sandbox import _fallback, _spawn
from assay.sandbox._common import ProcessResult, SandboxLimits, findable, scrubbed_env, shell_argv

_LEAN = _spawn.available()
DEFAULT_LIMITS = SandboxLimits()


async def run_process(
    command: str | Sequence[str],
    *,
    cwd: str | Path | None = None,
    limits: SandboxLimits = DEFAULT_LIMITS,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> ProcessResult:
    """Run ``command`` (a shell string or an argv list) in ``cwd`` under ``limits``, in a session of its own
    (the whole process group is killed at the end). ``env`` defaults to the scrubbed environment.

    stdout keeps its first ``max_output_bytes``, stderr its last. Never raises for the process's sake.
    """
    env = env if env is not None else scrubbed_env(limits.env_allow)
    if not isinstance(command, str) and not findable(command[0], cwd, env.get("PATH")):
        return ProcessResult(error=f"could not start process: command not found: {command[0]}")
    if cwd is not None and not Path(cwd).is_dir():
        return ProcessResult(error=f"could not start process: no such directory: {cwd}")
    argv = shell_argv(command, cwd=cwd, memory_mb=limits.memory_mb)
    backend = _spawn.run if _LEAN else _fallback.run
    return await backend(argv, env=env, limits=limits, stdin=stdin)
