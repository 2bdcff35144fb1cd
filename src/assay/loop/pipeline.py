"""Proposals ahead of evaluations (SIFT's asynchronous expansion): a producer task keeps up to ``depth``
proposals waiting in a queue ordered by priority, so a slow evaluation does not stop proposing and a slow
proposer does not stop evaluating."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

# Makes proposal ``number``: returns (priority, lower first; commit or None for a failed proposal; log info).
Produce = Callable[[int], Awaitable[tuple[float, str | None, dict[str, Any]]]]


@dataclass(order=True)
class Queued:
    """A proposal waiting for evaluation; ordered by ``priority``, then by ``number`` (older first)."""

    priority: float
    number: int
    commit: str | None = field(compare=False)
    info: dict[str, Any] = field(compare=False)


class ProposalPipeline:
    """Runs ``produce`` in the background, numbering proposals from ``first``; ``take`` hands out the waiting
    proposal with the lowest priority. At most ``depth`` proposals wait (or are being made) at any time."""

    def __init__(self, produce: Produce, *, depth: int, first: int = 1) -> None:
        if depth < 1:
            raise ValueError(f"depth must be at least 1, got {depth}")
        self._produce = produce
        self._numbers = itertools.count(first)
        self._queue: asyncio.PriorityQueue[Queued] = asyncio.PriorityQueue()
        self._slots = asyncio.Semaphore(depth)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start producing (call from inside the event loop)."""
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            await self._slots.acquire()
            number = next(self._numbers)
            priority, commit, info = await self._produce(number)
            self._queue.put_nowait(Queued(priority, number, commit, info))

    async def take(self) -> Queued:
        """The best waiting proposal, waiting for one if none is ready; re-raises the producer's error."""
        assert self._task is not None, "start() the pipeline first"
        if self._queue.empty():
            getter = asyncio.ensure_future(self._queue.get())
            await asyncio.wait({getter, self._task}, return_when=asyncio.FIRST_COMPLETED)
            if not getter.done():
                getter.cancel()
                self._task.result()  # the producer failed: raise its error here
            item = getter.result()
        else:
            item = self._queue.get_nowait()
        self._slots.release()
        return item

    async def close(self) -> list[Queued]:
        """Stop producing; return the proposals that were made but never taken, best first."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        dropped = []
        while not self._queue.empty():
            dropped.append(self._queue.get_nowait())
        return dropped
