"""Ending untrusted processes when assay itself is told to stop (SIGTERM, SIGHUP: ``kill``, ``timeout``, a
closed terminal).

Python's default for these signals ends assay at once, and processes running in sessions of their own would
outlive it. The handler kills every live process group first, then ends assay by the same signal (so its exit
status says how it ended). Jailed processes die with assay in any case, SIGKILL included (bubblewrap's
``--die-with-parent``); this covers unjailed ones, which can still escape by calling ``setsid`` themselves.
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType

from assay.sandbox._common import LIVE_GROUPS, kill_group

SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def kill_live_groups() -> None:
    """SIGKILL every process group a running ``run_process`` started."""
    for pid in list(LIVE_GROUPS):
        kill_group(pid)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    kill_live_groups()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def install_cleanup() -> None:
    """Install the SIGTERM and SIGHUP handlers (main thread only; elsewhere nothing is installed)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in SIGNALS:
        if signal.getsignal(signum) in (signal.SIG_DFL, None):
            signal.signal(signum, _on_signal)
