"""Executors run many case evaluations with bounded concurrency. Callers depend only on ``Executor``: the
local one here, the Ray one in :mod:`assay.evaluation.ray_executor` (loaded by name, only when asked for)."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from assay.registry import Family, Registry, configured

if TYPE_CHECKING:
    from assay.evaluation.evaluator import Evaluator
    from assay.model import Case, CaseResult, Split

T = TypeVar("T")
R = TypeVar("R")


@runtime_checkable
class ExecutorProtocol(Protocol):
    """Runs the cases of an evaluation: maps an async function over items, results in input order.

    Optional: ``async evaluate(evaluator, cases, workdir, *, trace_dir, on_result)`` (default: ``map`` over
    ``evaluator.run_case``) and ``close()``."""

    async def map(
        self,
        fn: Callable[[Any], Awaitable[Any]],
        items: Sequence[Any],
        *,
        concurrency: int,
        on_result: Callable[[Any], None] | None = None,
    ) -> list[Any]:
        """``fn`` over ``items``, at most ``concurrency`` at a time."""
        ...


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

    async def evaluate(
        self,
        evaluator: Evaluator,
        cases: Sequence[tuple[Case, Split]],
        workdir: Path,
        *,
        trace_dir: Path | None = None,
        on_result: Callable[[CaseResult], None] | None = None,
    ) -> list[CaseResult]:
        """Run ``evaluator.run_case`` on every case in ``workdir``, results in input order. An executor that
        runs cases elsewhere overrides this (it cannot ship the evaluator's live clients, only its recipe)."""

        async def one(item: tuple[Case, Split]) -> CaseResult:
            return await evaluator.run_case(item[0], item[1], workdir, trace_dir)

        return await self.map(one, list(cases), concurrency=evaluator.concurrency, on_result=on_result)

    def close(self) -> None:  # noqa: B027 - most executors hold nothing
        """Release what the executor holds (connections, shipped trees)."""


EXECUTORS: Registry[type[Executor]] = Registry("executor")
EXECUTOR: Family[Executor] = Family(
    "executor",
    ExecutorProtocol,
    Executor,
    ("evaluate", "close"),
    registry=EXECUTORS,
    build=configured(EXECUTORS),
)


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
