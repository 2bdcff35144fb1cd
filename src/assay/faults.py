"""Fault points for crash tests: ``ASSAY_FAULT=<point>`` makes the process kill itself at that point.

A test sets the variable on a subprocess to stop it at an exact place (``adopt:before-ref-update``: the
merge is built, the user's branch has not moved yet) instead of racing a timer against it. Unset, a fault
point costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

FAULT_VAR = "ASSAY_FAULT"


def fault_point(name: str) -> None:
    """SIGKILL this process (as ``kill -9`` would: no cleanup, no ``finally``) when ``ASSAY_FAULT`` is ``name``."""
    if os.environ.get(FAULT_VAR) == name:
        os.kill(os.getpid(), signal.SIGKILL)
