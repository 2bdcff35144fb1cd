"""A daemon thread, started on first use, that serves items put on a queue until it is closed: what serve's
group-commit writer and group reader share.

Under load a batch waits a moment for company. A batch has a fixed cost (on PostgreSQL a transaction's round
trips, about 0.35 ms of CPU between the service and the server) and a small one per item (about 0.04 ms), so on
a busy machine the size of the batches decides what a feedback costs. Taking only what is queued when the thread
comes for it, the batches under load held one or two items: the thread had finished the last batch before the
next item arrived. So when items have been arriving less than twice ``company`` seconds apart (a moving
average), a batch closes ``company`` seconds after its first item arrived, or when full; an item that has waited
that long already (the thread was busy) waits no more. When items come one at a time, no batch waits.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from typing import Generic, TypeVar

Item = TypeVar("Item")
COMPANY = 0.002
_PACE_WEIGHT = 0.1  # the weight of the newest gap in the moving average of the gaps between arrivals


class QueueThread(Generic[Item]):
    """``_put`` queues an item for ``_run`` (a subclass's loop over :meth:`_batches`), starting the thread named
    ``thread_name`` first if it is not running; :meth:`close` lets it finish what is queued and joins it. A
    closed one starts again on the next ``_put``. Under load a batch waits up to ``company`` seconds for more
    items (0: never)."""

    thread_name = "assay-serve-thread"

    def __init__(self, company: float = COMPANY) -> None:
        self.company = company
        self._queue: queue.SimpleQueue[tuple[float, Item] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    def _put(self, item: Item) -> None:
        with self._start:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
                self._thread.start()
        self._queue.put((time.monotonic(), item))

    def close(self) -> None:
        """Finish what is queued and stop the thread."""
        with self._start:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _batches(self, limit: int | None = None) -> Iterator[list[Item]]:
        """For ``_run``: what is queued, in batches. Each waits for its first item and takes what else is queued
        already (under load, what arrives until ``company`` seconds after its first item), at most ``limit`` in
        all; the batch that meets the end of the queue is the last."""
        gap: float | None = None  # the moving average of the time between arrivals
        last: float | None = None
        while True:
            first = self._queue.get()
            if first is None:
                return
            busy = gap is not None and gap < 2 * self.company
            closes = first[0] + self.company if busy else 0.0
            batch, stop = [first], False
            while limit is None or len(batch) < limit:
                wait = closes - time.monotonic()
                try:
                    more = self._queue.get(timeout=wait) if wait > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            for arrived, _ in batch:
                if last is not None:  # a pause counts as ten waits at most: the pace is soon found again
                    sample = min(max(0.0, arrived - last), 10 * self.company)
                    gap = sample if gap is None else gap + _PACE_WEIGHT * (sample - gap)
                last = arrived
            yield [item for _, item in batch]
            if stop:
                return

    def _run(self) -> None:
        raise NotImplementedError
