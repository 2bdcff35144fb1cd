"""Every stop rule passes the stop rule suite (:func:`assay.testing.stop_rules.check_stop_rule`): each
registered rule built by name with its settings (:func:`settings`: a rule registered later adds its own), the
standard rules of a run with every option on (each rule class of assay.loop.stops is among them, so a new one
joins); tests/testing/test_own_parts.py runs it on a rule of the user's own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay.config import EvolveConfig
from assay.extensions import STOP_RULE, conform, resolve
from assay.loop import stops
from assay.presets import resolve as settings_of
from assay.testing.stop_rules import check_stop_rule, fresh, worn

EVERY_OPTION = EvolveConfig(
    cycle_layers=False,
    target_pass_rate=0.9,
    stop_on_oscillation=True,
    max_tokens=100,
    max_cost_usd=1.0,
    max_evaluations=100,
    max_judge_calls=10,
)
# Rules that say nothing of a worn run: it has no best, and its layer tracker has not moved.
SILENT_ON_WORN = {"target", "layers_exhausted"}


def settings(run_dir: Path) -> dict[str, dict[str, Any]]:
    """What each registered rule is built with, watching a STOP file present, a clock at 1e9 s and Ctrl-C
    pressed."""
    return {
        "budget": {"tokens": 100, "cost_usd": 1.0, "evaluations": 100, "judge_calls": 10},
        "failed_in_a_row": {"limit": 5},
        "generations": {"limit": 10},
        "interrupt": {"pressed": lambda: True},
        "layers_exhausted": {},
        "oscillation": {},
        "plateau": {"generations": 8},
        "regression": {},
        "search_exhausted": {},
        "stop_file": {"run_dir": run_dir},
        "target": {"pass_rate": 0.9},
        "wall_clock": {"seconds": 60.0, "now": lambda: 1e9},
    }


def named(name: str, tmp_path: Path) -> Callable[[], Any]:
    return lambda: resolve(STOP_RULE, name, **settings(tmp_path)[name])


@pytest.mark.parametrize("name", stops.STOP_RULES.names())
def test_registered_rule_conforms(name: str, tmp_path: Path) -> None:
    assert name in settings(tmp_path), f"add the settings of the stop rule {name!r} to settings()"
    (tmp_path / "STOP").write_text("")
    said = check_stop_rule(named(name, tmp_path), [worn()])
    assert (said == [None]) == (name in SILENT_ON_WORN), said
    (tmp_path / "STOP").unlink()
    if name not in ("interrupt", "wall_clock"):  # these watch the live clock and keyboard, not the run
        assert check_stop_rule(named(name, tmp_path), [fresh()]) == [None]


def rule_classes() -> set[type]:
    return {
        value
        for value in vars(stops).values()
        if isinstance(value, type) and issubclass(value, stops.StopRule) and value is not stops.StopRule
    }


def test_every_rule_class_is_registered() -> None:
    assert {stops.STOP_RULES.get(name) for name in stops.STOP_RULES.names()} == rule_classes()


def rules(run_dir: Path, *, clock: float = 0.0, pressed: bool = False, limit: int = 10) -> list[Any]:
    return stops.standard_rules(
        EVERY_OPTION,
        settings_of(EVERY_OPTION),
        limit,
        run_dir=run_dir,
        now=lambda: clock,
        pressed=lambda: pressed,
    )


def test_every_rule_class_is_a_standard_rule(tmp_path: Path) -> None:
    assert {type(rule) for rule in rules(tmp_path)} == rule_classes()


def test_every_built_in_rule_says_in_one_line_what_it_stops_on(tmp_path: Path) -> None:
    built_in = rules(tmp_path)
    described = [rule.describe() for rule in built_in]
    assert all(text.strip() and "\n" not in text for text in described), described
    assert not {type(rule).__name__ for rule in built_in} & set(described)  # each says it in words
    assert len(set(described)) == len(described)


def test_standard_rules_let_a_new_run_go_on(tmp_path: Path) -> None:
    for rule in rules(tmp_path):
        assert check_stop_rule(lambda rule=rule: rule, [fresh()]) == [None], type(rule).__name__


def test_standard_rules_stop_a_worn_run_with_one_line_each(tmp_path: Path) -> None:
    (tmp_path / "STOP").write_text("")
    said = {
        type(rule).__name__: check_stop_rule(lambda rule=rule: rule, [worn()])[0]
        for rule in rules(tmp_path, clock=1e9, pressed=True)
    }
    silent = {name for name, reason in said.items() if reason is None}
    assert silent <= {"TargetReached", "LayersExhausted"}, said


class Rambles:
    """A rule of the user's own whose reason runs over two lines."""

    def check(self, run: Any) -> str | None:
        return "the run is long\nand getting longer" if run.generation > 100 else None


def test_the_suite_names_what_a_broken_rule_breaks() -> None:
    with pytest.raises(
        AssertionError, match=r"on run 1 says 'the run is long.*neither None nor a one-line reason"
    ):
        check_stop_rule(Rambles)


def test_a_rule_with_an_async_check_is_refused() -> None:
    class Awaits:
        async def check(self, run: Any) -> str | None:
            return None

    with pytest.raises(TypeError, match="check must be a plain `def`"):
        conform(STOP_RULE, Awaits())
