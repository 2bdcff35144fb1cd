"""Ctrl-C during a run: the first finishes the current generation, logs it and stops; the second stops at once."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Protocol


class Interruptible(Protocol):
    interrupted: bool


def install_sigint(state: Interruptible, report: Callable[[str], None]) -> Callable[[], None]:
    """Install the handler on the running loop; returns the function that removes it. Where signals cannot be
    handled (not the main thread), nothing is installed and Ctrl-C keeps its default behaviour."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()

    def on_sigint() -> None:
        if state.interrupted and task is not None:
            task.cancel()
            return
        state.interrupted = True
        report("interrupt: finishing this generation (Ctrl-C again to stop at once)")

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    except (NotImplementedError, RuntimeError, ValueError):
        return lambda: None

    def uninstall() -> None:
        loop.remove_signal_handler(signal.SIGINT)

    return uninstall
