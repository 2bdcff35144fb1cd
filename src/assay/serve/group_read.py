"""Group read: selections waiting at the same time share one read of the database.

A selection needs every variant with its rating rows (one statement, :meth:`ServeState.snapshot`). Under load
many arrive together; one reader thread per process reads once for all that are waiting when it starts, per
category, and hands each its copy of the answer with one call into their event loop. A read starts after every
request it answers arrived, so a selection still sees every feedback acknowledged before it was sent, on any
replica. When selections arrive one at a time each gets a read of its own; under load a read waits up to 2 ms
for company (see :mod:`assay.serve.queue_thread`).

Compared with a read per request on FastAPI's thread pool, the database sees fewer statements, and a request
costs one hand-off between threads instead of a pool thread's round trip and a connection checkout of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from assay.serve.queue_thread import QueueThread

T = TypeVar("T")
_Waiting = tuple[str | None, asyncio.Future[object]]


class GroupRead(QueueThread[_Waiting], Generic[T]):
    """Reads of ``read(category)`` shared by the requests waiting together; one thread, started on first use
    (:meth:`close` answers what is waiting and stops it)."""

    thread_name = "assay-serve-reader"

    def __init__(self, read: Callable[[str | None], T]) -> None:
        super().__init__()
        self._read = read
        self.reads = 0
        self.requests = 0

    async def get(self, category: str | None) -> T:
        """The result of a read of ``category`` that started after this call."""
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        self._put((category, future))
        return await future  # type: ignore[return-value]

    def _run(self) -> None:
        for waiting in self._batches():
            by_category: dict[str | None, list[asyncio.Future[object]]] = {}
            for category, future in waiting:
                by_category.setdefault(category, []).append(future)
            for category, futures in by_category.items():
                try:
                    result: object = self._read(category)
                except Exception as exc:  # each waiting request raises it
                    result = exc
                self.reads += 1
                self.requests += len(futures)
                settle([(future, result) for future in futures])


def settle(answers: Sequence[tuple[asyncio.Future[T], T | BaseException]]) -> None:
    """Hand each future its answer from another thread: one call into each event loop, however many."""
    loops: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[T], T | BaseException]]] = {}
    for future, answer in answers:
        loops.setdefault(future.get_loop(), []).append((future, answer))
    for loop, mine in loops.items():
        with contextlib.suppress(RuntimeError):  # the loop was closed: nobody is waiting any more
            loop.call_soon_threadsafe(_resolve, mine)


def _resolve(answers: Sequence[tuple[asyncio.Future[T], T | BaseException]]) -> None:
    for future, answer in answers:
        if future.done():  # the request was cancelled (client gone)
            continue
        if isinstance(answer, BaseException):
            future.set_exception(answer)
        else:
            future.set_result(answer)
