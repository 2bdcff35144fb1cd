"""Finding the processes a test started, from outside any PID namespace: by a unique marker in their command
line (``sleep 1234.5678``)."""

from __future__ import annotations

import contextlib
import os
import random
import signal
from pathlib import Path


def unique_marker() -> str:
    """A ``sleep`` duration no other process uses: long, with random decimals."""
    return f"{random.randint(5000, 9000)}.{random.randint(10**6, 10**7)}"


def marked_processes(marker: str, comm: str = "sleep") -> list[int]:
    """The pids of live ``comm`` processes (``sleep`` by default) whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
            name = (entry / "comm").read_text().strip()
            if marker in cmdline and state != "Z" and name == comm:
                found.append(int(entry.name))
    return found


def kill_marked(marker: str) -> None:
    """SIGKILL every process holding ``marker`` (cleanup after a test that shows processes escaping)."""
    for pid in marked_processes(marker):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
