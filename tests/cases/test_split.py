from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from assay.cases import SplitResult, assign_splits, select
from assay.config import SplitConfig
from assay.errors import ConfigError
from assay.model import Case, Split
from tests.cases._helpers import one_line, write


def make(n: int, prefix: str = "case") -> list[Case]:
    return [Case(id=f"{prefix}-{i}", input=f"question {i}") for i in range(n)]


def counts(result: dict[str, Split]) -> tuple[int, int, int]:
    c = Counter(result.values())
    return c[Split.DEV], c[Split.HOLDOUT], c[Split.REGRESSION]


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (20, (14, 4, 2)),
        (10, (7, 2, 1)),
        (100, (70, 20, 10)),
        (15, (11, 3, 1)),
        (9, (8, 0, 1)),
        (3, (3, 0, 0)),
    ],
)
def test_first_split_has_exact_proportions(tmp_path: Path, n: int, expected: tuple[int, int, int]) -> None:
    result = assign_splits(make(n), SplitConfig(), tmp_path / "split.json")
    assert counts(result) == expected
    assert set(result) == {f"case-{i}" for i in range(n)}


def test_fewer_than_min_cases_means_no_holdout(tmp_path: Path) -> None:
    result = assign_splits(make(9), SplitConfig(), tmp_path / "a.json")
    assert Split.HOLDOUT not in result.values()
    lowered = assign_splits(make(9), SplitConfig(min_cases_for_holdout=5), tmp_path / "b.json")
    assert counts(lowered) == (6, 2, 1)  # 6.3 / 1.8 / 0.9 by largest remainder


def test_split_is_deterministic_across_runs_and_input_orders(tmp_path: Path) -> None:
    cases = make(40)
    first = assign_splits(cases, SplitConfig(), tmp_path / "one" / "split.json")
    shuffled = cases[:]
    random.Random(7).shuffle(shuffled)
    second = assign_splits(shuffled, SplitConfig(), tmp_path / "two" / "split.json")
    assert dict(first) == dict(second)
    assert (tmp_path / "one" / "split.json").read_text() == (tmp_path / "two" / "split.json").read_text()
    # the returned mapping follows the given cases' order
    assert list(second) == [c.id for c in shuffled]


def test_file_format_and_no_temp_files_left(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "split.json"
    result = assign_splits(make(20), SplitConfig(), path)
    data = json.loads(path.read_text())
    assert data["version"] == 1
    assert data["fractions"] == {"dev": 0.7, "holdout": 0.2, "regression": 0.1}
    assert data["splits"] == {k: v.value for k, v in result.items()}
    assert list(data["splits"]) == sorted(data["splits"])
    assert [p.name for p in path.parent.iterdir()] == ["split.json"]
    assert isinstance(result, SplitResult) and result.warnings == [] and len(result.added) == 20
    assert result.splits == dict(result) and type(result.splits) is dict


def test_file_is_reused_not_recomputed(tmp_path: Path) -> None:
    path = tmp_path / "split.json"
    assign_splits(make(20), SplitConfig(), path)
    data = json.loads(path.read_text())
    dev_id = next(k for k, v in data["splits"].items() if v == "dev")
    data["splits"][dev_id] = "regression"  # a hand edit (or an older run) must win
    path.write_text(json.dumps(data))
    before = path.stat().st_mtime_ns
    again = assign_splits(make(20), SplitConfig(), path)
    assert again[dev_id] == Split.REGRESSION
    assert again.added == [] and again.warnings == []
    assert path.stat().st_mtime_ns == before  # nothing new: not rewritten


def test_adding_cases_keeps_existing_assignments(tmp_path: Path) -> None:
    path = tmp_path / "split.json"
    old = assign_splits(make(20), SplitConfig(), path)
    grown = make(20) + make(30, prefix="new")
    result = assign_splits(grown, SplitConfig(), path)
    assert {k: result[k] for k in old} == dict(old)
    assert result.added == [f"new-{i}" for i in range(30)]
    data = json.loads(path.read_text())
    assert list(data["splits"])[20:] == result.added  # appended after the original ids
    # new ids are placed by their own hash, so adding them in other batches gives the same answer
    other = tmp_path / "other.json"
    assign_splits(make(20), SplitConfig(), other)
    assign_splits(make(20) + make(10, prefix="new"), SplitConfig(), other)
    batched = assign_splits(grown, SplitConfig(), other)
    assert dict(batched) == dict(result)
    again = assign_splits(list(reversed(grown)), SplitConfig(), path)
    assert dict(again) == {c.id: result[c.id] for c in reversed(grown)}


def test_threshold_assignment_tracks_the_fractions(tmp_path: Path) -> None:
    path = tmp_path / "split.json"
    assign_splits(make(20), SplitConfig(), path)
    result = assign_splits(make(20) + make(3000, prefix="more"), SplitConfig(), path)
    dev, holdout, regression = counts({k: result[k] for k in result.added})
    assert abs(dev / 3000 - 0.7) < 0.03
    assert abs(holdout / 3000 - 0.2) < 0.03
    assert abs(regression / 3000 - 0.1) < 0.03


def test_small_set_grows_past_min_then_gets_holdout(tmp_path: Path) -> None:
    path = tmp_path / "split.json"
    small = assign_splits(make(5), SplitConfig(), path)
    assert Split.HOLDOUT not in small.values()
    grown = assign_splits(make(5) + make(200, prefix="x"), SplitConfig(), path)
    assert {k: grown[k] for k in small} == dict(small)
    assert Split.HOLDOUT in grown.values()


def test_removed_ids_stay_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "split.json"
    full = assign_splits(make(20), SplitConfig(), path)
    fewer = assign_splits(make(12), SplitConfig(), path)
    assert set(fewer) == {f"case-{i}" for i in range(12)}
    assert set(json.loads(path.read_text())["splits"]) == set(full)
    back = assign_splits(make(20), SplitConfig(), path)
    assert dict(back) == dict(full)


def test_changed_fractions_keep_the_file_and_warn(tmp_path: Path) -> None:
    path = tmp_path / "split.json"
    original = assign_splits(make(20), SplitConfig(), path)
    text = path.read_text()
    changed = SplitConfig(dev=0.5, holdout=0.3, regression=0.2)
    result = assign_splits(make(20), changed, path)
    assert dict(result) == dict(original)
    assert path.read_text() == text
    (warning,) = result.warnings
    assert str(path) in warning and "dev 0.7/holdout 0.2/regression 0.1" in warning
    assert "dev 0.5/holdout 0.3/regression 0.2" in warning and "delete" in warning
    # new cases are still placed with the file's fractions, which stay in the file
    assign_splits(make(20) + make(5, prefix="n"), changed, path)
    assert json.loads(path.read_text())["fractions"] == {"dev": 0.7, "holdout": 0.2, "regression": 0.1}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{not json", "invalid JSON at line 1, column 2"),
        ("[]", "expected a JSON object with version 1"),
        ('{"version": 2, "fractions": {}, "splits": {}}', "version 1"),
        (
            '{"version": 1, "fractions": {"dev": 1}, "splits": {}}',
            "'fractions' must give dev, holdout, regression",
        ),
        (
            '{"version": 1, "fractions": {"dev": "a", "holdout": 0, "regression": 0}, "splits": {}}',
            "numbers between 0 and 1",
        ),
        (
            '{"version": 1, "fractions": {"dev": 1, "holdout": 0, "regression": 0}, "splits": []}',
            "'splits' must map",
        ),
        (
            '{"version": 1, "fractions": {"dev": 1, "holdout": 0, "regression": 0}, "splits": {"a": "train"}}',
            "case 'a' has split 'train'",
        ),
    ],
)
def test_corrupt_split_file_is_a_config_error(tmp_path: Path, text: str, why: str) -> None:
    path = write(tmp_path / "split.json", text)
    with pytest.raises(ConfigError) as excinfo:
        assign_splits(make(3), SplitConfig(), path)
    one_line(excinfo, f"{path}: corrupt split file (", why, "delete it to re-split")
    assert path.read_text() == text  # never silently redone


def test_no_cases_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "split.json"
    assert assign_splits([], SplitConfig(), path) == {}
    assert not path.exists()


def test_select(tmp_path: Path) -> None:
    cases = make(20)
    splits = assign_splits(cases, SplitConfig(), tmp_path / "split.json")
    dev = select(cases, splits, "dev")
    assert len(dev) == 14 and all(splits[c.id] == Split.DEV for c in dev)
    assert [c.id for c in dev] == [c.id for c in cases if splits[c.id] == Split.DEV]
    assert len(select(cases, splits, "holdout")) == 4
    assert len(select(cases, splits, Split.REGRESSION)) == 2
    assert select(cases, splits, "all") == cases
    with pytest.raises(ConfigError) as excinfo:
        select(cases, splits, "train")
    one_line(excinfo, "unknown split 'train'; expected one of dev, holdout, regression, all")
    with pytest.raises(ConfigError) as excinfo:
        select([*cases, Case(id="stray", input="x")], splits, "dev")
    one_line(excinfo, "case 'stray' has no split")
