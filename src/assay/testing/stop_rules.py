"""The stop rule suite: :func:`check_stop_rule`, which every built-in rule passes and a rule of one's own can
run, on runs such as :func:`fresh` (just started) and :func:`worn` (long and going nowhere)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

from assay.loop.events import Spend
from assay.loop.state.view import RunView
from assay.protocols import StopRuleProtocol
from assay.stopping import STOP_RULE
from assay.testing._expect import conformed, expect, one_line


def fresh() -> RunView:
    """A run that has just started."""
    return RunView()


def worn() -> RunView:
    """A run that has been going for a long time and is going nowhere."""
    return RunView(
        generation=500,
        since_keep=500,
        best_holdouts=(0.9, 0.8, 0.7),
        content_hashes=("a", "b", "a", "b"),
        search_exhausted=True,
        failed_in_a_row=("proposal failed: no edit",) * 5,
        spent=Spend(case_runs=10**4, tokens=10**6, cost_usd=100.0, judge_calls=100),
    )


def check_stop_rule(make: Callable[[], object], runs: Sequence[RunView] = ()) -> list[str | None]:
    """The stop rule contract, on a rule ``make()`` builds: it conforms (a plain ``def check``, a boolean
    ``tidy_first``), says the same through :func:`assay.registry.conform` as alone, and says None or a one-line
    reason for every run of ``runs`` (default: :func:`fresh` and :func:`worn`), which it leaves as it was.
    Returns what it said of each run, for the caller to judge (a rule of one's own knows when it must stop).

    Plain function. Raises AssertionError naming the part of the contract that failed."""
    rule = make()
    who = f"stop rule {type(rule).__name__}"
    expect(isinstance(rule, StopRuleProtocol), f"{who}: lacks check(run)")
    checked = conformed(STOP_RULE, rule, who)
    runs = list(runs) or [fresh(), worn()]
    expect(
        checked.check(runs[0]) == rule.check(runs[0]),  # type: ignore[attr-defined]
        f"{who}: says otherwise through conform than alone",
    )
    expect(isinstance(checked.tidy_first, bool), f"{who}: tidy_first is {checked.tidy_first!r}, not a bool")
    said: list[str | None] = []
    for index, run in enumerate(runs):
        before = copy.deepcopy(run)
        reason = checked.check(run)
        expect(
            reason is None or one_line(reason),
            f"{who}: on run {index} says {reason!r}, neither None nor a one-line reason",
        )
        expect(run == before, f"{who}: changed run {index} it was shown")
        said.append(reason)
    return said
