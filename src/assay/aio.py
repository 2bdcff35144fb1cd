"""Running coroutines from synchronous code."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` that does not hand the result back through the main task.

    On Python 3.11, ``asyncio.run`` reprs its main task (result included) while restoring the SIGINT
    handler; for an evaluation of thousands of cases that repr alone took half a second.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await coro)

    asyncio.run(main())
    return box[0]
