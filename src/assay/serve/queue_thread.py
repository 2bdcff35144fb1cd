"""A daemon thread, started on first use, that serves items put on a queue until it is closed: what serve's
group-commit writer and group reader share."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Generic, TypeVar

Item = TypeVar("Item")


class QueueThread(Generic[Item]):
    """``_put`` queues an item for ``_run`` (a subclass's loop over ``self._queue``, which ends at ``None``),
    starting the thread named ``thread_name`` first if it is not running; :meth:`close` lets it finish what is
    queued and joins it. A closed one starts again on the next ``_put``."""

    thread_name = "assay-serve-thread"

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Item | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    def _put(self, item: Item) -> None:
        with self._start:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
                self._thread.start()
        self._queue.put(item)

    def close(self) -> None:
        """Finish what is queued and stop the thread."""
        with self._start:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _batches(self, limit: int | None = None) -> Iterator[list[Item]]:
        """For ``_run``: what is queued, in batches. Each waits for its first item and takes what else is queued
        already, at most ``limit`` in all; the batch that meets the end of the queue is the last."""
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch, stop = [first], False
            while limit is None or len(batch) < limit:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            yield batch
            if stop:
                return

    def _run(self) -> None:
        raise NotImplementedError
