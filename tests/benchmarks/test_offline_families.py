"""benchmarks/tasks: the offline search benchmark's families, their projects and its table (fast: no git)."""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from assay.cases import load_cases
from assay.config import load_config
from assay.evaluation.evaluator import EvalResult
from assay.history.records import CandidateRecord
from assay.loop.events import Decided, Measured, Spend
from assay.model import CaseResult, Output, Split
from tests.benchmarks.offline_modules import offline_search, optuna_alone, parameters, tasks

CASE_SEEDS, HALVES, UNSEEN_SEEDS = tasks.CASE_SEEDS, tasks.HALVES, tasks.UNSEEN_SEEDS
Family, families = tasks.Family, tasks.families

ALL = families()


def test_the_halves_hold_at_least_five_families_and_share_none() -> None:
    tune, check = families("tune"), families("check")
    assert len(ALL) >= 5 and tune and check
    assert {f.half for f in tune} == {"tune"} and {f.half for f in check} == {"check"}
    assert not {f.name for f in tune} & {f.name for f in check}
    assert set(HALVES) == {"tune", "check"}
    assert not set(CASE_SEEDS) & set(UNSEEN_SEEDS)


@pytest.mark.parametrize("family", ALL, ids=lambda f: f.name)
def test_a_family_is_deterministic_and_its_reference_beats_its_start(family: Family) -> None:
    task = family.task
    assert family.suffix in (".py", ".json", ".toml") and task.TARGET > 0
    assert family.shape in tasks.SHAPES
    assert json.dumps(task.instance(1)) == json.dumps(task.instance(1))
    assert json.dumps(task.instance(1)) != json.dumps(task.instance(2))
    unseen = family.instances(UNSEEN_SEEDS[:5])
    start = family.unseen_gap(family.start, unseen)
    assert math.isfinite(start) and start > task.TARGET  # the start leaves something to find
    if family.reference is not None:
        assert family.unseen_gap(family.reference, unseen) < start


def test_a_program_that_crashes_or_lacks_the_function_has_an_infinite_gap() -> None:
    family = next(f for f in ALL if f.name == "knapsack")
    name = family.task.FUNCTION
    assert family.unseen_gap(f"def {name}(*args):\n    raise ValueError('no')\n") == math.inf
    assert family.unseen_gap("x = 1\n") == math.inf
    assert family.unseen_gap("def (:\n") == math.inf


@pytest.mark.parametrize("family", ALL, ids=lambda f: f.name)
def test_the_project_loads_and_its_harness_scores_each_case_by_its_own_instance(
    family: Family, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = family.write(tmp_path / family.name, "preset: standard\nseed: 3\n")
    config = load_config(root / "assay.yaml")
    assert config.artifact.paths == [family.task.FILE]
    assert config.evolve.seed == 3
    cases = load_cases([root / f for f in config.cases.files], default_checks=config.checks)
    assert [c.id for c in cases] == [f"{family.name}-{seed}" for seed in CASE_SEEDS]
    assert config.artifact.kind == ("code" if family.suffix == ".py" else "config")
    monkeypatch.syspath_prepend(str(root))
    for name in ("harness", family.task.FILE.removesuffix(".py"), "score"):
        sys.modules.pop(name, None)
    harness = importlib.import_module("harness")
    score = importlib.import_module("score")
    case = cases[0]
    output = harness.run(SimpleNamespace(vars=case.vars), root)
    expected = family.task.gap(family.load(family.start), family.task.instance(CASE_SEEDS[0]))
    assert float(output) == pytest.approx(expected)
    verdict = score.check(output, None)
    assert verdict["score"] == pytest.approx(1 / (1 + expected / 100))
    assert verdict["pass"] is (expected <= family.task.TARGET)
    assert score.check("0.0", None) == {"pass": True, "score": 1.0, "reason": "gap 0.00%"}


def test_the_table_gives_each_methods_mean_and_worst_beside_the_start_and_reference() -> None:
    family = next(f for f in ALL if f.name == "knapsack")
    runs = [
        offline_search.Run("knapsack", "tune", method, seed, gap, 100, "reached 100 generations", 1.0)
        for method, seed, gap in [
            ("default", 0, 1.0),
            ("default", 1, 3.0),
            ("random", 0, 5.0),
            ("random", 1, 6.0),
        ]
    ]
    lines = offline_search.table([family], runs, ["default", "random"]).splitlines()
    assert lines[0] == (
        "| half | family | start | reference | default mean | default worst | random mean | random worst |"
    )
    cells = [c.strip() for c in lines[2].strip("|").split("|")]
    unseen = family.instances(UNSEEN_SEEDS)
    assert cells[:4] == [
        "tune",
        "knapsack",
        f"{family.unseen_gap(family.start, unseen):.2f}%",
        f"{family.unseen_gap(family.reference or '', unseen):.2f}%",
    ]
    assert cells[4:] == ["2.00%", "3.00%", "5.50%", "6.00%"]


def test_the_benchmarks_runs_are_bounded_by_generations_not_the_clock() -> None:
    text = offline_search.settings(4, 30)
    assert "preset: standard" in text and "seed: 4" in text and "max_generations: 30" in text
    assert "wall_clock_s: 86400" in text and "plateau" not in text


def test_a_branch_no_instance_reaches_is_named_and_one_that_fires_is_not() -> None:
    family = next(f for f in ALL if f.name == "binpack_uniform")
    source = (
        "def priority(item, remaining):\n"
        "    if 0 < remaining - item - 5 < 45:\n        return -(remaining - item) * 2\n"
        "    if remaining - item > 500:\n        return 3\n"
        "    return -(remaining - item)\n"
    )
    assert family.dead_branches(source, list(CASE_SEEDS[:2])) == ["remaining - item > 500"]
    assert family.dead_branches(family.reference or "", list(CASE_SEEDS[:2])) == []


def test_more_dev_instances_are_dev_only_cases_and_a_run_may_start_from_the_reference(tmp_path: Path) -> None:
    from assay.evaluation.session import select_cases
    from assay.model import Split

    family = next(f for f in ALL if f.name == "knapsack")
    plain = load_config(family.write(tmp_path / "plain", "seed: 0\n") / "assay.yaml")
    more = load_config(
        Family(family.folder, "reference").write(tmp_path / "more", "seed: 0\n", 4) / "assay.yaml"
    )
    assert more.cases.dev_files == ["dev.json"] and "dev.json" in more.artifact.forbid
    before = {c.id: s for c, s in select_cases(plain).cases}
    after = {c.id: s for c, s in select_cases(more).cases}
    extra = [
        f"knapsack-{seed}" for seed in range(tasks.family.MORE_DEV_SEEDS, tasks.family.MORE_DEV_SEEDS + 4)
    ]
    assert after == {**before, **dict.fromkeys(extra, Split.DEV)}
    assert sorted(offline_search.dev_seeds(tmp_path / "more")) == sorted(
        [int(c.rsplit("-", 1)[1]) for c, s in before.items() if s is Split.DEV]
        + [int(c.split("-")[1]) for c in extra]
    )
    assert (tmp_path / "more" / family.task.FILE).read_text() == family.reference
    assert (tmp_path / "plain" / family.task.FILE).read_text() == family.start != family.reference


def test_each_shape_beside_the_scoring_function_has_a_family_in_each_half() -> None:
    for half in HALVES:
        shapes = {f.shape for f in families(half)}
        assert {"constructor", "record", "config", "class"} <= shapes, (half, shapes)
    assert set(tasks.SHAPES) == {"score", "constructor", "record", "config", "class"}


@pytest.mark.parametrize("family", [f for f in ALL if f.shape != "score"], ids=lambda f: f.name)
def test_a_new_shapes_numbers_are_in_its_start_within_their_ranges_some_at_0_or_1(family: Family) -> None:
    values = {name: parameters.read(family.task.FILE, family.start, name) for name in family.parameters}
    assert len(values) >= 3
    for name, spec in family.parameters.items():
        if isinstance(spec, list):
            assert values[name] in spec, name
        else:
            assert spec[0] <= values[name] <= spec[1], (name, values[name], spec)
    assert any(
        value in (0, 1) for value in values.values()
    )  # numbers a user wrote as 0.0 or 1.0 are knobs too
    assert optuna_alone.applies(family)


def test_families_with_numbers_in_their_start_are_the_ones_optuna_alone_runs_on() -> None:
    assert {f.name for f in ALL if optuna_alone.applies(f)} == {f.name for f in ALL if f.parameters}
    assert {f.name for f in ALL if not f.parameters} == {
        "binpack_uniform",
        "knapsack",
        "binpack_weibull",
        "scheduling",
        "tour",
    }


def test_the_spend_table_gives_mean_case_runs_and_the_share_that_crashed_per_method() -> None:
    family = next(f for f in ALL if f.name == "cache")
    runs = [
        offline_search.Run("cache", "check", "default", 0, 20.0, 100, "", 1.0, case_runs=700, crashed=70),
        offline_search.Run("cache", "check", "default", 1, 21.0, 100, "", 1.0, case_runs=300, crashed=0),
        offline_search.Run("cache", "check", "optuna-tpe", 0, 25.0, 100, "", 1.0, case_runs=693, crashed=7),
    ]
    lines = offline_search.spend_table([family], runs, ["default", "optuna-tpe", "random"]).splitlines()
    assert lines[0] == (
        "| half | family | default case runs | default crashed | optuna-tpe case runs | optuna-tpe crashed"
        " | random case runs | random crashed |"
    )
    assert lines[2] == "| check | cache | 500 | 7.0% | 693 | 1.0% | - | - |"


def _measured(commit: str, generation: int, outputs: list[Output], **fields: object) -> Measured:
    cases = [
        CaseResult(id=f"c{i}", split=Split.DEV, passed=False, score=0.5, output=output)
        for i, output in enumerate(outputs)
    ]
    return Measured(
        commit=commit,
        generation=generation,
        tier="L2",
        dev=EvalResult(cases=cases),
        spent=Spend(case_runs=len(cases)),
        **fields,
    )


def test_case_runs_of_candidates_that_crashed_on_a_case_or_were_screened_out_are_counted() -> None:
    fine, raised = Output(text="3.0"), Output(error="ValueError: overlap")
    record = CandidateRecord(
        run_id="r", generation=2, candidate_id="g2", commit="b", layer=0, proposer="mutate",
        description="", decision="discard",
    )  # fmt: skip
    events = [
        _measured("base", 0, [raised, fine, fine]),  # the baseline is no candidate
        _measured("a", 1, [fine, fine, fine]),
        _measured("b", 2, [fine, raised, fine, fine]),  # one case raised: a crash
        Decided(record=record, spent=Spend(case_runs=3)),  # the gate's reruns of it count too
        _measured("c", 3, [Output(text="  ")], screened_out=True),
        _measured("d", 4, [Output(timed_out=True), fine]),
    ]
    assert offline_search.crashed_case_runs(events) == 4 + 3 + 1 + 2


def test_runs_saved_to_a_file_load_back_as_they_were(tmp_path: Path) -> None:
    run = offline_search.Run(
        "curve", "tune", "optuna-cmaes", 3, 12.5, 80, "x", 2.0, [], 560, 14, [1000, 1002]
    )
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(dataclasses.asdict(run)) + "\n")
    assert offline_search.load_saved(path) == [run]
    assert offline_search.load_saved(tmp_path / "none.jsonl") == []


def test_an_ablation_runs_the_default_without_the_moves_it_names(tmp_path: Path) -> None:
    family = next(f for f in ALL if f.name == "curve")
    root = family.write(tmp_path / "p", offline_search.settings(0, 10, ("py.guard", "tune")))
    proposer = load_config(root / "assay.yaml").evolve.proposer
    assert proposer.type == "mutate" and proposer.without == ["py.guard", "tune"]
    plain = family.write(tmp_path / "q", offline_search.settings(0, 10))
    assert load_config(plain / "assay.yaml").evolve.proposer.without == []
