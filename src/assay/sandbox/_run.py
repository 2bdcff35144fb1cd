"""``run_process``: validate, build the shell command line (inside a jail when asked), pick the back end."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from assay.sandbox import _fallback, _spawn
from assay.sandbox._common import ProcessResult, SandboxLimits, findable, shell_argv
from assay.sandbox._env import scrubbed_env
from assay.sandbox.jail import Jail, bwrap_status, jail_argv, jail_env

if TYPE_CHECKING:
    from assay.sandbox.workers import JailWorkers

_LEAN = _spawn.available()
DEFAULT_LIMITS = SandboxLimits()


# Folders known to exist, with their real paths: every case of an evaluation runs in the same folder, and a
# stat costs tens of microseconds on some filesystems; one that vanishes later fails the shell's `cd` (exit
# 126) all the same.
_FOUND_DIRS: dict[str, str] = {}


async def run_process(
    command: str | Sequence[str],
    *,
    cwd: str | Path | None = None,
    limits: SandboxLimits = DEFAULT_LIMITS,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    jail: Jail | None = None,
    workers: JailWorkers | None = None,
) -> ProcessResult:
    """Run ``command`` (a shell string or an argv list) in ``cwd`` under ``limits``, in a process group of its
    own (the whole group is killed at the end), and in a session of its own where assay has a terminal.
    ``env`` defaults to the allow-listed environment. With a ``jail`` the command runs under bubblewrap
    (:mod:`assay.sandbox.jail`); when bubblewrap cannot run, the result is an error and nothing runs. With
    ``workers`` too, a jailed command runs in one of their long-lived jails (:mod:`assay.sandbox.workers`)
    instead of a jail of its own (Linux; elsewhere ``workers`` is unused).

    stdout keeps its first ``max_output_bytes``, stderr its last. Never raises for the process's sake.
    """
    env = env if env is not None else scrubbed_env(limits.env_allow)
    if not isinstance(command, str) and not findable(command[0], cwd, env.get("PATH")):
        return ProcessResult(error=f"could not start process: command not found: {command[0]}")
    if cwd is not None:
        real = _FOUND_DIRS.get(os.fspath(cwd))
        if real is None:
            if not os.path.isdir(cwd):
                return ProcessResult(error=f"could not start process: no such directory: {cwd}")
            real = _FOUND_DIRS[os.fspath(cwd)] = os.path.realpath(cwd)
        if jail is not None:
            cwd = real  # the jail mounts real paths
    argv = shell_argv(command, cwd=cwd, memory_mb=limits.memory_mb)
    if jail is not None:
        status = bwrap_status()
        if not status.available:
            return ProcessResult(error=f"could not start process in the sandbox: {status.reason}")
        if workers is not None and _LEAN:
            return await workers.run(
                argv,
                env=jail_env(env),
                limits=limits,
                stdin=stdin,
                jail=jail,
                home=env.get("HOME"),
                status=status,
            )
        argv = [*jail_argv(jail, home=env.get("HOME"), status=status), *argv]
        env = jail_env(env)
    backend = _spawn.run if _LEAN else _fallback.run
    result = await backend(argv, env=env, limits=limits, stdin=stdin)
    if (
        jail is not None
        and result.error is None
        and result.exit_code == 1
        and result.stderr.startswith(b"bwrap: ")
    ):
        first = result.stderr.decode("utf-8", "replace").splitlines()[0]
        result.error = f"the sandbox could not be set up: {first}"
    return result
