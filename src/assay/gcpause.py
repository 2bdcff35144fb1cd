"""Holding off Python's full garbage collections while many long-lived objects are built."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_NEVER = 2**30
_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] = (0, 0, 0)


@contextmanager
def full_collections_held() -> Iterator[None]:
    """Run the block without full (oldest-generation) garbage collections; young ones still run.

    Loading 50,000 cases builds about half a million objects that all live on. The collector starts a full
    collection each time the long-lived objects grow by a quarter, and each one walks every object in the
    process and frees none of these: together they cost more than the loading itself. Held off, the
    next full collection comes when the collector next calls for one after the block. Nested and
    concurrent uses are counted: the thresholds come back when the last one ends.
    """
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(_saved[0], _saved[1], _NEVER)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.set_threshold(*_saved)
