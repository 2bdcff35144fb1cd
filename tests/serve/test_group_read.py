"""Group read: selections waiting together share one read, and every read starts after the requests it answers
arrived."""

from __future__ import annotations

import asyncio
import threading

import pytest

from assay.serve.group_read import GroupRead


class _Source:
    """A read that counts its starts and can be held at the start until released."""

    def __init__(self) -> None:
        self.started = 0
        self.hold = threading.Event()
        self.hold.set()
        self.entered = threading.Event()
        self.fail = False

    def read(self, category: str | None) -> tuple[str | None, int]:
        self.started += 1
        number = self.started
        self.entered.set()
        self.hold.wait()
        if self.fail:
            raise RuntimeError("the database is down")
        return category, number


async def _until(condition: threading.Event) -> None:
    await asyncio.get_running_loop().run_in_executor(None, condition.wait)


async def test_requests_waiting_together_share_one_read_that_started_after_they_arrived() -> None:
    source = _Source()
    reader: GroupRead[tuple[str | None, int]] = GroupRead(source.read)
    try:
        source.hold.clear()
        first = asyncio.ensure_future(reader.get(None))
        await _until(source.entered)  # read 1 has started, before any of the others arrived
        others = [asyncio.ensure_future(reader.get(None)) for _ in range(20)]
        maths = [asyncio.ensure_future(reader.get("math")) for _ in range(5)]
        await asyncio.sleep(0)  # every request takes its first step: it is in the reader's queue
        source.hold.set()
        assert await first == (None, 1)
        answers = await asyncio.gather(*others)
        assert set(answers) == {(None, 2)} or set(answers) == {(None, 3)}
        assert set(await asyncio.gather(*maths)) <= {("math", 2), ("math", 3)}
        assert len(set(await asyncio.gather(*maths))) == 1
        assert source.started == 3 and reader.reads == 3 and reader.requests == 26
    finally:
        reader.close()


async def test_a_read_that_fails_fails_every_request_waiting_for_it() -> None:
    source = _Source()
    source.fail = True
    reader: GroupRead[tuple[str | None, int]] = GroupRead(source.read)
    try:
        results = await asyncio.gather(*(reader.get(None) for _ in range(5)), return_exceptions=True)
        assert all(isinstance(r, RuntimeError) and "down" in str(r) for r in results)
        source.fail = False
        assert await reader.get(None) == (None, source.started)
    finally:
        reader.close()


async def test_a_request_that_goes_away_leaves_the_others_their_answer() -> None:
    source = _Source()
    reader: GroupRead[tuple[str | None, int]] = GroupRead(source.read)
    try:
        source.hold.clear()
        first = asyncio.ensure_future(reader.get(None))
        await _until(source.entered)
        gone = asyncio.ensure_future(reader.get(None))
        kept = asyncio.ensure_future(reader.get(None))
        await asyncio.sleep(0)
        gone.cancel()
        source.hold.set()
        assert await first == (None, 1) and await kept == (None, 2)
        with pytest.raises(asyncio.CancelledError):
            await gone
    finally:
        reader.close()
