"""Run untrusted commands: own process group, time and memory limits, capped output, an allow-listed
environment, and — with a :class:`Jail` — a bubblewrap sandbox.

``run_process`` never raises for the process's sake: a timeout, an output flood, a kill or a missing program
is a ``ProcessResult`` whose ``error`` says what happened. On Linux it spawns with ``posix_spawn`` and
watches the child through a pidfd and non-blocking pipes in the event loop; elsewhere it uses asyncio's
subprocess support. Both paths behave the same and share the tests.
"""

from assay.sandbox._cleanup import install_cleanup, kill_live_groups
from assay.sandbox._common import (
    ProcessResult,
    SandboxLimits,
    decode_output,
    describe_exit,
)
from assay.sandbox._env import passes, scrubbed_env
from assay.sandbox._run import run_process
from assay.sandbox.jail import BwrapStatus, Jail, bwrap_status, interpreter_paths, path_dirs

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
