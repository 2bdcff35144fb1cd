"""benchmarks/tasks: the offline search benchmark's families, their projects and its table (fast: no git)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from assay.cases import load_cases
from assay.config import load_config

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
# benchmarks/ is not a package on the path: its `tasks` package is loaded from its folder, as offline_search.py
# (loaded below) imports it.
_TASKS = importlib.util.spec_from_file_location(
    "tasks", BENCHMARKS / "tasks" / "__init__.py", submodule_search_locations=[str(BENCHMARKS / "tasks")]
)
assert _TASKS is not None and _TASKS.loader is not None
tasks = importlib.util.module_from_spec(_TASKS)
sys.modules["tasks"] = tasks
_TASKS.loader.exec_module(tasks)
CASE_SEEDS, HALVES, UNSEEN_SEEDS = tasks.CASE_SEEDS, tasks.HALVES, tasks.UNSEEN_SEEDS
Family, families = tasks.Family, tasks.families

_SPEC = importlib.util.spec_from_file_location("offline_search", BENCHMARKS / "offline_search.py")
assert _SPEC is not None and _SPEC.loader is not None
offline_search = importlib.util.module_from_spec(_SPEC)
sys.modules["offline_search"] = offline_search  # dataclasses look their module up
_SPEC.loader.exec_module(offline_search)

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
    assert task.FILE.endswith(".py") and task.TARGET > 0
    assert json.dumps(task.instance(1)) == json.dumps(task.instance(1))
    assert json.dumps(task.instance(1)) != json.dumps(task.instance(2))
    unseen = family.instances(UNSEEN_SEEDS[:5])
    start = family.unseen_gap(family.start, unseen)
    assert math.isfinite(start) and start > task.TARGET  # the start leaves something to find
    if family.reference is not None:
        assert family.unseen_gap(family.reference, unseen) < start


def test_a_program_that_crashes_or_lacks_the_function_has_an_infinite_gap() -> None:
    family = ALL[0]
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
    monkeypatch.syspath_prepend(str(root))
    for name in ("harness", family.task.FILE.removesuffix(".py"), "score"):
        sys.modules.pop(name, None)
    harness = importlib.import_module("harness")
    score = importlib.import_module("score")
    case = cases[0]
    output = harness.run(SimpleNamespace(vars=case.vars), root)
    expected = family.task.gap(
        getattr(importlib.import_module(family.task.FILE.removesuffix(".py")), family.task.FUNCTION),
        family.task.instance(CASE_SEEDS[0]),
    )
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
