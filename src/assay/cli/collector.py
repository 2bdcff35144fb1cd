"""The cyclic garbage collector at start-up: off while a command imports what it needs, then the objects of the
start-up frozen out of it before the cases run.

Imports create a few hundred thousand long-lived objects, and the collector's full passes over them took 30 to
60 ms of a one-case ``assay eval`` (a fifth of what it spends before its first case) and 100 ms or more of an
evaluation of thousands of cases, for nothing: those objects live as long as the process. Only the commands that
then run cases (:data:`RUNNING`) switch it off; each of them calls :func:`run_command` to start its work.
"""

from __future__ import annotations

import gc
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

RUNNING = frozenset({"eval", "evolve", "resume", "init"})


def pause_for(command: str | None) -> bool:
    """Switch the collector off while ``command`` starts, when it is one that runs cases; whether it did."""
    if command not in RUNNING or not gc.isenabled():
        return False
    gc.disable()
    return True


def run_command(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command's work: the start-up's objects frozen (never scanned again), the collector on."""
    from assay.aio import run_sync

    gc.freeze()
    gc.enable()
    return run_sync(coro)
