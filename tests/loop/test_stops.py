from collections.abc import Sequence
from pathlib import Path

from assay.evaluation.evaluator import EvalResult
from assay.history.records import CandidateRecord
from assay.loop.events import Spend
from assay.loop.layers import LayerTracker
from assay.loop.measure import Measurement
from assay.loop.state import Best, LoopState, RunView
from assay.loop.stops import (
    Budget,
    InterruptPressed,
    LayersExhausted,
    MaxGenerations,
    Oscillation,
    Plateau,
    ScoreRegression,
    StopFile,
    TargetReached,
    WallClock,
    alternates,
    firing,
)
from assay.model import CaseResult, Output, Split
from assay.protocols import StopRuleProtocol


def first_reason(rules: Sequence[StopRuleProtocol], run: RunView) -> str | None:
    """The reason of the first rule that says stop (the loop reads every one, with ``firing``)."""
    fired = firing(rules, run)
    return fired[0][1] if fired else None


def state(**kwargs: object) -> RunView:
    """A view of a run with these fields (lists given become the view's tuples)."""
    return RunView(**{k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()})  # type: ignore[arg-type]


def with_best(best: Best) -> RunView:
    s = LoopState.new()
    s.lineage.best = best
    return s.view()


def best_passing(passed: int, total: int) -> Best:
    cases = [
        CaseResult(id=f"c{i}", split=Split.DEV, passed=i < passed, score=1.0, output=Output())
        for i in range(total)
    ]
    record = CandidateRecord(
        run_id="r",
        generation=1,
        candidate_id="cand-0001",
        layer=1,
        proposer="m",
        description="",
        decision="keep",
    )
    return Best(record, Measurement(dev=EvalResult(cases=cases)), 0)


def test_max_generations():
    assert MaxGenerations(3).check(state(generation=2)) is None
    assert "3 generations" in MaxGenerations(3).check(state(generation=3))


def test_wall_clock_reads_the_run_clock():
    now = [59.0]
    rule = WallClock(60, lambda: now[0])
    assert rule.check(state()) is None
    now[0] = 61.0
    assert "wall clock" in rule.check(state())


def test_budgets_read_what_the_events_spent():
    assert Budget(tokens=100).check(state(spent=Spend(tokens=99))) is None
    assert "token" in Budget(tokens=100).check(state(spent=Spend(tokens=100)))
    assert "cost" in Budget(cost_usd=1.0).check(state(spent=Spend(cost_usd=1.5)))
    assert "evaluation" in Budget(evaluations=10).check(state(spent=Spend(case_runs=10)))
    assert "judge" in Budget(judge_calls=3).check(state(spent=Spend(judge_calls=4)))
    assert Budget().check(state(spent=Spend(tokens=10**9))) is None


def test_target_and_plateau():
    assert TargetReached(1.0).check(with_best(best_passing(9, 10))) is None
    assert "target" in TargetReached(0.9).check(with_best(best_passing(19, 20)))
    assert TargetReached(0.5).check(state()) is None  # no best yet
    assert "plateau" in Plateau(5).check(state(since_keep=5))
    assert Plateau(5).check(state(since_keep=4)) is None


def test_oscillation_is_alternation_of_content_or_failing_set():
    assert Oscillation().check(state(content_hashes=["a", "b", "a"])) is None
    assert (
        Oscillation().check(state(content_hashes=["x", "a", "a", "a", "a"])) is None
    )  # a repeat, not a bounce
    assert "content bounced" in Oscillation().check(state(content_hashes=["x", "a", "b", "a", "b"]))
    assert Oscillation().check(state(content_hashes=["a", "b", "a", "b", "c"])) is None  # it moved on
    one, other = frozenset({"c1"}), frozenset({"c2", "c3"})
    assert "failing cases bounced" in Oscillation().check(state(failing_sets=[one, other, one, other]))
    assert Oscillation().check(state(failing_sets=[one, one, one, one])) is None


def test_failing_sets_that_only_grow_worse_are_no_oscillation():
    """A search whose edits mostly do harm bounces between every case failing and the best's failures and one
    more: neither trades a case for another, so the run is not going round in circles."""
    best_and_one, every = frozenset({"c1", "c2", "c3"}), frozenset({"c1", "c2", "c3", "c4"})
    assert Oscillation().check(state(failing_sets=[best_and_one, every, best_and_one, every])) is None
    assert Oscillation().check(state(failing_sets=[every, best_and_one, every, best_and_one])) is None
    traded = frozenset({"c1", "c2", "c4"})  # c3 fixed, c4 broken: a trade
    assert "failing cases bounced" in Oscillation().check(
        state(failing_sets=[best_and_one, traded, best_and_one, traded])
    )
    assert alternates([1, 2, 3, 1, 2, 3], period=3) and not alternates([1, 2, 3, 1, 2, 4], period=3)


def test_score_regression_watches_the_bests_holdout():
    assert ScoreRegression().check(state(best_holdouts=[0.5, 0.6, 0.55])) is None
    assert ScoreRegression().check(state(best_holdouts=[0.7, 0.6])) is None
    assert "holdout score fell" in ScoreRegression().check(state(best_holdouts=[0.9, 0.7, 0.6, 0.5]))
    assert ScoreRegression().check(state(kept_scores=[0.7, 0.6, 0.5])) is None  # kept dev scores only rise


def test_a_holdout_fall_counts_when_more_than_the_gates_least_gain():
    # A real run's holdout (bin packing, two holdout cases): a fall of 0.009, then one of 0.00003 (one bin).
    holdouts = [0.9527, 0.9618, 0.95275, 0.95272]
    assert "holdout score fell" in ScoreRegression().check(state(best_holdouts=holdouts))
    assert ScoreRegression(0.005).check(state(best_holdouts=holdouts)) is None
    assert "holdout score fell" in ScoreRegression(0.005).check(state(best_holdouts=[0.96, 0.95, 0.94]))
    assert ScoreRegression(0.005).check(state(best_holdouts=[0.96, 0.95, 0.946])) is None


def test_the_regression_rule_takes_the_gates_min_delta() -> None:
    from assay.config import EvolveConfig
    from assay.loop.stops import standard_rules
    from assay.presets import resolve

    def rule(evolve: EvolveConfig) -> ScoreRegression:
        made = standard_rules(
            evolve, resolve(evolve), 10, run_dir=Path("."), now=lambda: 0.0, pressed=lambda: False
        )
        return next(r for r in made if isinstance(r, ScoreRegression))

    assert rule(EvolveConfig()).min_delta == 0.005  # the standard preset's
    assert rule(EvolveConfig(preset="quick")).min_delta == 0.01
    assert rule(EvolveConfig(gate_options={"min_delta": 0})).min_delta == 0.0


def test_stop_file_layers_and_interrupt(tmp_path: Path):
    pressed = [False]
    s = LoopState.new(LayerTracker(layers=[1], discards_per_layer=1))
    rules = [StopFile(tmp_path), LayersExhausted(), InterruptPressed(lambda: pressed[0])]
    assert first_reason(rules, s.view()) is None
    (tmp_path / "STOP").write_text("")
    assert first_reason(rules, s.view()) == "STOP file found"
    (tmp_path / "STOP").unlink()
    s.feedback.tracker.record(False)
    assert first_reason(rules, s.view()) == "all layers exhausted"
    pressed[0] = True
    assert "interrupted" in first_reason(rules, state())


def test_only_rules_that_say_the_search_is_done_let_the_best_be_tidied_first(tmp_path: Path):
    (tmp_path / "STOP").write_text("")
    view = state(generation=5, since_keep=5, best_pass_rate=1.0)
    rules = [
        MaxGenerations(5),
        Plateau(5),
        TargetReached(1.0),
        StopFile(tmp_path),
        WallClock(1, now=lambda: 2.0),
        Budget(evaluations=0),
    ]
    fired = firing(rules, view)
    assert [rule for rule, _ in fired] == rules  # every rule that fires, in order, not only the first
    assert [getattr(rule, "tidy_first", False) for rule, _ in fired] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    assert fired[0][1] == first_reason(rules, view) == "reached 5 generations"
    assert LayersExhausted.tidy_first and Oscillation.tidy_first and not ScoreRegression.tidy_first


def test_standard_rules_follow_the_config(tmp_path: Path):
    from assay.config import EvolveConfig
    from assay.loop.stops import standard_rules
    from assay.presets import resolve

    def names(evolve: EvolveConfig) -> list[str]:
        rules = standard_rules(
            evolve, resolve(evolve), 10, run_dir=tmp_path, now=lambda: 0.0, pressed=lambda: False
        )
        return [type(rule).__name__ for rule in rules]

    assert "Oscillation" in names(EvolveConfig())
    assert "Oscillation" not in names(EvolveConfig(stop_on_oscillation=False))
    assert "TargetReached" not in names(EvolveConfig(target_pass_rate=None))
    assert "FailedInARow" in names(EvolveConfig())
    # A rule that cannot fire is not in force: no budget set, or layers that cycle (never exhausted).
    assert "Budget" not in names(EvolveConfig()) and "Budget" in names(EvolveConfig(max_evaluations=500))
    assert "LayersExhausted" not in names(EvolveConfig()) and EvolveConfig().layers_cycle
    assert "LayersExhausted" in names(EvolveConfig(cycle_layers=False))


def test_failed_in_a_row_names_the_most_common_error_of_the_last_n() -> None:
    from assay.loop.stops import FailedInARow

    rule = FailedInARow(3)
    assert rule.check(state(failed_in_a_row=["proposal failed: no edit"] * 2)) is None
    reason = rule.check(
        state(failed_in_a_row=["x", "proposal failed: no edit", "boom", "proposal failed: no edit"])
    )
    assert reason == (
        "dead end: the last 3 candidates could not be proposed or evaluated (2 of 3: proposal failed: no edit)"
    )
