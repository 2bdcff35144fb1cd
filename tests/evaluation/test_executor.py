import asyncio

from assay.evaluation.executor import EXECUTORS, LocalExecutor


async def test_results_in_input_order_with_bounded_concurrency():
    in_flight = 0
    peak = 0

    async def work(x: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01 * (x % 3))
        in_flight -= 1
        return x * x

    seen = []
    results = await LocalExecutor().map(work, list(range(20)), concurrency=4, on_result=seen.append)
    assert results == [x * x for x in range(20)]
    assert peak == 4
    assert sorted(seen) == sorted(results)


async def test_empty_input():
    async def work(x: int) -> int:
        return x

    assert await LocalExecutor().map(work, [], concurrency=8) == []


def test_registry_by_name():
    assert EXECUTORS.get("local") is LocalExecutor
