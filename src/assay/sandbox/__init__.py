"""Run untrusted commands: own process group, time and memory limits, capped output, an allow-listed
environment, and — with a :class:`Jail` — a bubblewrap sandbox.

``run_process`` never raises for the process's sake: a timeout, an output flood, a kill or a missing program
is a ``ProcessResult`` whose ``error`` says what happened. On Linux it spawns with ``posix_spawn`` and a
worker thread watches the child through a pidfd and its pipes; elsewhere it uses asyncio's subprocess
support. Both paths behave the same and share the tests.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.sandbox._cleanup import install_cleanup, kill_live_groups
    from assay.sandbox._common import ProcessResult, SandboxLimits, decode_output, describe_exit
    from assay.sandbox._env import passes, scrubbed_env
    from assay.sandbox._run import run_process
    from assay.sandbox.jail import BwrapStatus, Jail, bwrap_status, interpreter_paths, path_dirs

# Imported on first use: every `assay` start-up installs the signal cleanup, which must not import asyncio.
_LAZY = {
    "install_cleanup": "_cleanup",
    "kill_live_groups": "_cleanup",
    "ProcessResult": "_common",
    "SandboxLimits": "_common",
    "decode_output": "_common",
    "describe_exit": "_common",
    "passes": "_env",
    "scrubbed_env": "_env",
    "run_process": "_run",
    "BwrapStatus": "jail",
    "Jail": "jail",
    "bwrap_status": "jail",
    "interpreter_paths": "jail",
    "path_dirs": "jail",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay.sandbox' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"assay.sandbox.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BwrapStatus",
    "Jail",
    "ProcessResult",
    "SandboxLimits",
    "bwrap_status",
    "decode_output",
    "describe_exit",
    "install_cleanup",
    "interpreter_paths",
    "kill_live_groups",
    "passes",
    "path_dirs",
    "run_process",
    "scrubbed_env",
]
