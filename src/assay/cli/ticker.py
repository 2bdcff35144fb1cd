"""Progress lines for a pipe: where a terminal would show a progress bar or the live view, a log file or a CI
job gets one plain line every few seconds, so slow work (a local model on a CPU) is never taken for a hang."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from types import TracebackType

EVERY_S = 5.0


def every_s(default: float = EVERY_S) -> float:
    """Seconds between progress lines: ``ASSAY_PROGRESS_S`` if set to a positive number, else ``default``."""
    try:
        value = float(os.environ.get("ASSAY_PROGRESS_S", ""))
    except ValueError:
        return default
    return value if value > 0 else default


def duration(seconds: float) -> str:
    """``seconds`` as ``42s``, ``3m05s`` or ``1h02m``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Ticker:
    """Calls ``write(line())`` every ``every`` seconds from a background thread while the ``with`` block runs
    (the event loop may be busy, or waiting on one long case: the line comes anyway)."""

    def __init__(
        self, line: Callable[[], str], write: Callable[[str], None], every: float | None = None
    ) -> None:
        self._line = line
        self._write = write
        self._every = every_s() if every is None else every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="assay-progress", daemon=True)

    def _tick(self) -> None:
        while not self._stop.wait(self._every):
            self._write(self._line())

    def __enter__(self) -> Ticker:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()


class CaseCounter:
    """Cases done out of a total, with the elapsed time and an estimate of what is left."""

    def __init__(self, label: str, total: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self.failed = 0
        self._clock = clock
        self._started = clock()

    def add(self, failed: bool) -> None:
        self.done += 1
        self.failed += failed

    def line(self) -> str:
        """``eval: 12/40 cases, 3 failed, 32s elapsed, about 1m15s left``."""
        elapsed = self._clock() - self._started
        parts = [f"{self.label}: {self.done}/{self.total} cases"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        parts.append(f"{duration(elapsed)} elapsed")
        if 0 < self.done < self.total:
            parts.append(f"about {duration(elapsed / self.done * (self.total - self.done))} left")
        return ", ".join(parts)
