import pytest

from assay.aio import run_sync


def test_run_sync_returns_the_result():
    async def work() -> list[int]:
        return [1, 2, 3]

    assert run_sync(work()) == [1, 2, 3]


def test_run_sync_propagates_errors():
    async def boom() -> None:
        raise ValueError("x")

    with pytest.raises(ValueError, match="x"):
        run_sync(boom())
