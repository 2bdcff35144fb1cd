"""Run untrusted commands: own process group, time and memory limits, capped output, scrubbed environment.

``run_process`` never raises for the process's sake: a timeout, an output flood, a kill or a missing program
is a ``ProcessResult`` whose ``error`` says what happened. On Linux it spawns with ``posix_spawn`` and
watches the child through a pidfd and non-blocking pipes in the event loop; elsewhere it uses asyncio's
subprocess support. Both paths behave the same and share the tests.
"""

from assay.sandbox._common import (
    ProcessResult,
    SandboxLimits,
    decode_output,
    describe_exit,
    scrubbed_env,
)
from assay.sandbox._run import run_process

__all__ = ["ProcessResult", "SandboxLimits", "decode_output", "describe_exit", "run_process", "scrubbed_env"]
