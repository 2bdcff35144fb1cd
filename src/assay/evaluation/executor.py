"""Executors run many case evaluations with bounded concurrency. Callers depend only on ``Executor``,
so a distributed backend (Ray) can be added without touching them."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from assay.registry import Registry

T = TypeVar("T")
R = TypeVar("R")


class Executor(ABC):
    """Maps an async function over items, at most ``concurrency`` at a time, results in input order."""

    @abstractmethod
    async def map(
        self,
        fn: Callable[[T], Awaitable[R]],
        items: Sequence[T],
        *,
        concurrency: int,
        on_result: Callable[[R], None] | None = None,
    ) -> list[R]: ...


EXECUTORS: Registry[type[Executor]] = Registry("executor")


@EXECUTORS.register("local")
class LocalExecutor(Executor):
    """A fixed pool of asyncio workers in this process. Subprocess runners overlap as concurrent processes,
    I/O-bound runners as concurrent requests."""

    async def map(
        self,
        fn: Callable[[T], Awaitable[R]],
        items: Sequence[T],
        *,
        concurrency: int,
        on_result: Callable[[R], None] | None = None,
    ) -> list[R]:
        results: list[R | None] = [None] * len(items)
        next_index = iter(range(len(items)))

        async def worker() -> None:
            for index in next_index:
                result = await fn(items[index])
                results[index] = result
                if on_result is not None:
                    on_result(result)

        workers = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(items))))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        return results  # type: ignore[return-value]
