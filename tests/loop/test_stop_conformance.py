"""One suite every stop rule must pass: the built-in ones (each rule class of assay.loop.stops is among the
standard rules when every option is on, so a new one joins) and rules of the user's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.config import EvolveConfig
from assay.extensions import STOP_RULE, conform
from assay.loop import stops
from assay.loop.events import Spend
from assay.loop.state import RunView
from assay.presets import resolve
from assay.protocols import StopRuleProtocol

EVERY_OPTION = EvolveConfig(
    cycle_layers=False,
    target_pass_rate=0.9,
    stop_on_oscillation=True,
    max_tokens=100,
    max_cost_usd=1.0,
    max_evaluations=100,
    max_judge_calls=10,
)


def rules(run_dir: Path, *, clock: float = 0.0, pressed: bool = False, limit: int = 10) -> list[Any]:
    return stops.standard_rules(
        EVERY_OPTION,
        resolve(EVERY_OPTION),
        limit,
        run_dir=run_dir,
        now=lambda: clock,
        pressed=lambda: pressed,
    )


def fresh() -> RunView:
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


def check_rule(rule: StopRuleProtocol, runs: list[RunView]) -> list[str | None]:
    """The contract: conforms, and says None or a one-line reason for every run, which it leaves as it was."""
    assert isinstance(rule, StopRuleProtocol)
    checked = conform(STOP_RULE, rule)
    assert checked.check(runs[0]) == rule.check(runs[0]) and isinstance(checked.tidy_first, bool)
    said = [checked.check(run) for run in runs]
    for reason in said:
        assert reason is None or (isinstance(reason, str) and reason.strip() and "\n" not in reason)
    return said


def test_every_rule_class_is_a_standard_rule(tmp_path: Path) -> None:
    classes = {
        value
        for value in vars(stops).values()
        if isinstance(value, type) and issubclass(value, stops.StopRule) and value is not stops.StopRule
    }
    assert {type(rule) for rule in rules(tmp_path)} == classes


def test_every_built_in_rule_says_in_one_line_what_it_stops_on(tmp_path: Path) -> None:
    built_in = rules(tmp_path)
    described = [rule.describe() for rule in built_in]
    assert all(text.strip() and "\n" not in text for text in described), described
    assert not {type(rule).__name__ for rule in built_in} & set(described)  # each says it in words
    assert len(set(described)) == len(described)


def test_built_in_rules_let_a_new_run_go_on(tmp_path: Path) -> None:
    for rule in rules(tmp_path):
        assert check_rule(rule, [fresh()]) == [None], type(rule).__name__


def test_built_in_rules_stop_a_worn_run_with_one_line_each(tmp_path: Path) -> None:
    (tmp_path / "STOP").write_text("")
    said = {
        type(rule).__name__: check_rule(rule, [worn()])[0]
        for rule in rules(tmp_path, clock=1e9, pressed=True)
    }
    silent = {name for name, reason in said.items() if reason is None}
    assert silent <= {"TargetReached", "LayersExhausted"}, said  # no best, and the tracker has not moved


class EveryOther:
    """A stop rule of the user's own, with no base class."""

    def check(self, run: Any) -> str | None:
        return "an even generation" if run.generation and run.generation % 2 == 0 else None


def test_a_rule_of_ones_own_runs_through_the_suite() -> None:
    assert check_rule(EveryOther(), [fresh()]) == [None]
    assert check_rule(EveryOther(), [RunView(generation=4)]) == ["an even generation"]


def test_a_rule_with_an_async_check_is_refused() -> None:
    class Awaits:
        async def check(self, run: Any) -> str | None:
            return None

    with pytest.raises(TypeError, match="check must be a plain `def`"):
        conform(STOP_RULE, Awaits())
