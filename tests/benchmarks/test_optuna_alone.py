"""benchmarks/optuna_alone.py: a plain Optuna study over a family's declared numbers, at a budget of case runs."""

from __future__ import annotations

import ast
import math

import pytest

from tests.benchmarks.offline_modules import offline_search, optuna_alone, parameters, tasks

THERMOSTAT = next(f for f in tasks.families("tune") if f.name == "thermostat")
DEV = [1000, 1001]


@pytest.mark.parametrize("method", ["optuna-tpe", "optuna-cmaes"])
def test_a_study_runs_whole_trials_within_its_budget_from_the_start_and_keeps_the_best(method: str) -> None:
    run = offline_search.run_optuna(THERMOSTAT.folder, method, 0, DEV, 7)
    assert (run.method, run.family, run.half, run.dev) == (method, "thermostat", "tune", DEV)
    assert (
        run.generations == 3 and run.case_runs == 6 and run.crashed == 0
    )  # 7 case runs: three trials of two
    assert run.stop == "6 of 7 case runs in 3 trials (0 raised)"
    start = THERMOSTAT.unseen_gap(THERMOSTAT.start)
    assert math.isfinite(run.gap) and run.gap != start


def test_the_first_trial_is_the_start_and_the_best_artifact_holds_the_best_trials_values() -> None:
    family, dev = THERMOSTAT, [THERMOSTAT.task.instance(s) for s in DEV]
    study = optuna_alone.run_study(family, "tpe", 1, dev, 8)
    assert study.trials == 4 and study.case_runs == 8 and study.failed == 0
    best = {name: parameters.read(family.task.FILE, study.source, name) for name in family.parameters}
    start = {name: parameters.read(family.task.FILE, family.start, name) for name in family.parameters}
    assert best != start  # the start (GAIN 1.0, nothing else) is beaten within three trials on this seed
    scores = [
        1 / (1 + family.task.gap(family.load(source), i) / 100) for i in dev for source in [study.source]
    ]
    assert study.best_score == pytest.approx(sum(scores) / len(scores))
    ast.parse(study.source)


def test_trials_that_raise_are_failed_and_their_case_runs_counted_as_crashed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    family = tasks.Family(next(f for f in tasks.families("tune") if f.name == "shelves").folder)
    # a range where every trial but the start's (enqueued, MARGIN 1.0) overlaps its boxes: the harness refuses it
    monkeypatch.setattr(family.task, "PARAMETERS", {"MARGIN": (-5.0, -1.0)})
    dev = [family.task.instance(s) for s in DEV]
    with pytest.warns(UserWarning, match="out of range"):  # Optuna's note on the enqueued start
        study = optuna_alone.run_study(family, "cmaes", 0, dev, 9)
    # the start's trial ran both cases; each other raised on its first, and trials go on while two fit
    assert study.trials == 7 and study.failed == 6
    assert study.case_runs == 2 + 6 and study.crashed_case_runs == 6
    assert study.source == family.start


def test_a_family_without_numbers_has_no_study() -> None:
    knapsack = next(f for f in tasks.families("tune") if f.name == "knapsack")
    assert not optuna_alone.applies(knapsack)
    with pytest.raises(ValueError, match="declares no PARAMETERS"):
        optuna_alone.run_study(knapsack, "tpe", 0, [], 10)
