"""The runner suite: :func:`check_runner`, which every registered runner passes and a runner of one's own can
run. Build the runner so that it answers a case with its input (an echo): the suite runs :data:`CASE`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from assay.model import Case, Output
from assay.protocols import RunnerProtocol
from assay.runners.base import RUNNER, Runner
from assay.testing._expect import conformed, expect

CASE = Case(id="hello", input="hello")


async def check_runner(make: Callable[[], object], workdir: Path) -> None:
    """The runner contract, on a runner ``make()`` builds, running the artifact in ``workdir``: it conforms;
    it turns :data:`CASE` into an Output without error that carries the input (``hello``); it says how it runs
    (``sandbox``: None, ``none`` or ``strict``), gives a positive default concurrency, and releases ``workdir``
    and closes without error. A Runner is used as it is (conform hands it back unwrapped).

    A coroutine: ``await check_runner(make, tmp_path)``, or ``asyncio.run(...)`` outside an event loop. Raises
    AssertionError naming the part of the contract that failed."""
    raw = make()
    who = f"runner {type(raw).__name__}"
    expect(isinstance(raw, RunnerProtocol), f"{who}: lacks async run(case, workdir)")
    runner = conformed(RUNNER, raw, who)
    if isinstance(raw, Runner):
        expect(runner is raw, f"{who}: a Runner is wrapped by conform, not used as it is")
    output = await runner.run(CASE, workdir)
    expect(isinstance(output, Output), f"{who}: run returned {type(output).__name__}, not an Output")
    expect(output.error is None, f"{who}: the echo case failed: {output.error}")
    expect(
        "hello" in output.text, f"{who}: the output does not carry the case's input 'hello': {output.text!r}"
    )
    expect(
        runner.sandbox in (None, "none", "strict"),
        f"{who}: sandbox is {runner.sandbox!r}, not None, none or strict",
    )
    concurrency = runner.default_concurrency()
    expect(
        isinstance(concurrency, int) and concurrency >= 1, f"{who}: default_concurrency() is {concurrency!r}"
    )
    await runner.release(workdir)
    await runner.aclose()
