"""The executor suite: :func:`check_executor`, which every registered executor passes and an executor of one's
own can run: ``map`` over an async function, and ``evaluate`` of an evaluator's cases."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assay.evaluation.evaluator import Evaluator
from assay.evaluation.executor import EXECUTOR, Executor, ExecutorProtocol
from assay.model import Case, CaseResult, CheckSpec, Output, Split
from assay.runners.base import RUNNER
from assay.testing._expect import conformed, expect


class _Echo:
    """A runner that starts no process: the case's input, after a pause that differs from case to case (so
    cases finish out of order)."""

    async def run(self, case: Case, workdir: Path) -> Output:
        await asyncio.sleep(0.003 * (len(str(case.input)) % 3))
        return Output(text=str(case.input))


def echo_cases(count: int = 9) -> list[tuple[Case, Split]]:
    """Cases ``e0``, ``e1``, ... whose output is their input; every third one expects something else (fails)."""
    return [
        (
            Case(
                id=f"e{i}",
                input="w" * i,
                checks=[CheckSpec(type="equals", value="w" * i if i % 3 else "other")],
            ),
            Split.HOLDOUT if i % 4 == 3 else Split.DEV,
        )
        for i in range(count)
    ]


def echo_evaluator(concurrency: int = 3) -> Evaluator:
    """An evaluator of :func:`echo_cases` in this process (no runner process, no judge)."""
    return Evaluator(conformed(RUNNER, _Echo(), "runner"), concurrency=concurrency)


class _Tracker:
    """Counts the calls of ``fn`` in flight, and the most at once."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.peak = 0

    async def square(self, x: int) -> int:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(0.01 * (x % 3))
            if x < 0:
                raise ValueError(f"boom {x}")
            return x * x
        finally:
            self.in_flight -= 1


async def _maps_in_order(executor: Executor, who: str) -> None:
    for items, concurrency in ((list(range(20)), 4), (list(range(6)), 1), (list(range(3)), 8)):
        tracker, seen = _Tracker(), list[int]()
        results = await executor.map(tracker.square, items, concurrency=concurrency, on_result=seen.append)
        expect(
            results == [x * x for x in items],
            f"{who}: map over {len(items)} items returned {results}, not the results in input order",
        )
        expect(
            tracker.peak <= concurrency,
            f"{who}: map ran {tracker.peak} calls at once with concurrency {concurrency}",
        )
        expect(
            Counter(seen) == Counter(results) and len(seen) == len(results),
            f"{who}: on_result was not called once per result: {seen} for {results}",
        )
    seen = list[int]()
    empty = await executor.map(_Tracker().square, [], concurrency=8, on_result=seen.append)
    expect(
        empty == [] and seen == [], f"{who}: map over no items returned {empty} and called on_result {seen}"
    )


async def _map_raises(executor: Executor, who: str) -> None:
    tracker = _Tracker()
    try:
        await executor.map(tracker.square, [0, 1, -1, 2, 3, 4, 5, 6], concurrency=3)
    except ValueError as exc:
        expect(str(exc) == "boom -1", f"{who}: map raised {exc!r}, not the error of the call that failed")
    except Exception as exc:
        raise AssertionError(f"{who}: map raised {type(exc).__name__}: {exc}, not fn's ValueError") from exc
    else:
        raise AssertionError(f"{who}: map swallowed the ValueError a call of fn raised")
    expect(tracker.in_flight == 0, f"{who}: map raised with {tracker.in_flight} calls of fn still running")


def _verdicts(results: Sequence[CaseResult]) -> list[tuple[Any, ...]]:
    return [(r.id, r.split, r.passed, r.score, r.unjudged, r.output.text) for r in results]


async def _evaluates(
    executor: Executor, evaluator: Evaluator, cases: Sequence[tuple[Case, Split]], workdir: Path, who: str
) -> None:
    expected = [await evaluator.run_case(case, split, workdir) for case, split in cases]
    seen: list[str] = []
    results = await executor.evaluate(evaluator, cases, workdir, on_result=lambda r: seen.append(r.id))
    expect(
        isinstance(results, list) and all(isinstance(r, CaseResult) for r in results),
        f"{who}: evaluate returned {type(results).__name__}, not a list of CaseResults",
    )
    ids = [case.id for case, _ in cases]
    expect([r.id for r in results] == ids, f"{who}: evaluate returned {[r.id for r in results]}, not {ids}")
    expect(
        _verdicts(results) == _verdicts(expected),
        f"{who}: evaluate's verdicts differ from the evaluator's own: {_verdicts(results)} vs {_verdicts(expected)}",
    )
    expect(Counter(seen) == Counter(ids), f"{who}: on_result was not called once per case: {seen}")
    none = await executor.evaluate(evaluator, [], workdir)
    expect(none == [], f"{who}: evaluate of no cases returned {none}")


async def check_executor(
    make: Callable[[], object],
    *,
    evaluator: Evaluator | None = None,
    cases: Sequence[tuple[Case, Split]] = (),
    workdir: Path | None = None,
) -> None:
    """The executor contract, on an executor ``make()`` builds: ``map`` returns ``fn``'s results in input
    order, never runs more than ``concurrency`` calls at once, calls ``on_result`` once per result, maps no
    items to ``[]``, and raises the error a call of ``fn`` raised, with no call left running; ``evaluate`` runs
    an evaluator's cases in ``workdir``: one CaseResult per case, in input order, with the verdicts the
    evaluator gives each case itself (``run_case``), ``on_result`` called once per case, and no cases give
    ``[]``; the executor closes.

    ``evaluator``, ``cases`` and ``workdir`` default to :func:`echo_evaluator` and :func:`echo_cases` (a runner in
    this process); an executor that runs cases elsewhere, which rebuilds the evaluator from assay.yaml, is given
    one ``assay.evaluation.session.build_evaluator`` made, its cases and the artifact's folder.
    A coroutine: ``await check_executor(MyExecutor)``, or ``asyncio.run(...)`` outside an event loop. Raises
    AssertionError naming the part of the contract that failed."""
    raw = make()
    who = f"executor {type(raw).__name__}"
    expect(isinstance(raw, ExecutorProtocol), f"{who}: lacks async map(fn, items, *, concurrency, on_result)")
    executor = conformed(EXECUTOR, raw, who)
    if evaluator is None:
        evaluator, cases, workdir = echo_evaluator(), echo_cases(), workdir or Path.cwd()
    if not cases or workdir is None:
        raise ValueError("check_executor: an evaluator given to the suite needs its cases and workdir")
    try:
        await _maps_in_order(executor, who)
        await _map_raises(executor, who)
        await _evaluates(executor, evaluator, cases, workdir, who)
    finally:
        executor.close()
