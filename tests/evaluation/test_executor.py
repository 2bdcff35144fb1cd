"""Every registered executor that runs here passes the executor suite
(:func:`assay.testing.executors.check_executor`), built by name as the evaluator builds it; the Ray one runs the
suite on a cluster in tests/evaluation/test_ray_executor.py (e2e layer)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

import assay.evaluation.ray_executor  # noqa: F401 - registers the executor named ray (imports no Ray)
from assay.config import AssayConfig
from assay.evaluation.executor import EXECUTORS, LocalExecutor
from assay.evaluation.session import make_executor
from assay.testing.executors import check_executor

ELSEWHERE = {"ray": "needs a Ray cluster (tests/evaluation/test_ray_executor.py runs the suite on one)"}
CONFIG = AssayConfig.model_validate(
    {
        "artifact": {"kind": "code", "paths": ["main.py"]},
        "cases": {"files": ["cases.yaml"]},
        "runner": {"type": "command", "command": "true"},
    }
)


@pytest.mark.parametrize("name", EXECUTORS.names())
async def test_registered_executor_conforms(name: str) -> None:
    if name in ELSEWHERE:
        pytest.skip(ELSEWHERE[name])
    await check_executor(lambda: make_executor(CONFIG, name))


def test_every_executor_is_in_the_suite() -> None:
    assert EXECUTORS.get("local") is LocalExecutor and set(ELSEWHERE) < set(EXECUTORS.names())


async def test_the_local_executor_fills_its_pool() -> None:
    in_flight = peak = 0

    async def work(x: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01 * (x % 3))
        in_flight -= 1
        return x

    assert await LocalExecutor().map(work, list(range(20)), concurrency=4) == list(range(20))
    assert peak == 4


class Unbounded:
    """An executor that ignores ``concurrency``."""

    async def map(
        self, fn: Any, items: Sequence[Any], *, concurrency: int, on_result: Any = None
    ) -> list[Any]:
        return await LocalExecutor().map(fn, items, concurrency=len(items) or 1, on_result=on_result)


class Swallows:
    """An executor that returns the error of a call as its result."""

    async def map(
        self, fn: Any, items: Sequence[Any], *, concurrency: int, on_result: Any = None
    ) -> list[Any]:
        async def safe(item: Any) -> Any:
            try:
                return await fn(item)
            except ValueError as exc:
                return exc

        return await LocalExecutor().map(safe, items, concurrency=concurrency, on_result=on_result)


@pytest.mark.parametrize(
    ("executor", "words"),
    [
        (Unbounded, "map ran 20 calls at once with concurrency 4"),
        (Swallows, "map swallowed the ValueError a call of fn raised"),
    ],
)
async def test_the_suite_names_what_a_broken_executor_breaks(executor: type, words: str) -> None:
    with pytest.raises(AssertionError, match=words):
        await check_executor(executor)
