"""benchmarks/offline_search.py end to end: real runs of `assay evolve` and of Optuna alone on a family, a line per
run, the tables."""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
METHODS = ("default", "random", "optuna-tpe", "optuna-cmaes")


def benchmark(*args: str, timeout: int = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "offline_search.py"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.e2e
def test_the_benchmark_prints_a_line_per_run_and_a_table_of_their_mean_and_worst(tmp_path: Path) -> None:
    saved = tmp_path / "runs.jsonl"
    args = (
        "--half",
        "tune",
        "--families",
        "curve",
        "--seeds",
        "2",
        "--first-seed",
        "7",
        "--generations",
        "3",
    )
    result = benchmark(*args, "--save", str(saved), timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("machine: ") and "cores" in result.stdout.splitlines()[0]
    command = " ".join(
        ["python", str(ROOT / "benchmarks" / "offline_search.py"), *args, "--save", str(saved)]
    )
    assert result.stdout.splitlines()[1] == f"command: {command}"
    gaps: dict[str, list[float]] = {m: [] for m in METHODS}
    seeds: dict[str, set[str]] = {m: set() for m in METHODS}
    spent: dict[tuple[str, str], int] = {}
    budgets: dict[tuple[str, str], int] = {}
    for line in result.stdout.splitlines():
        found = re.match(
            r"\[\d/8\] tune curve ([\w-]+) seed ([78]): unseen gap (\d+\.\d\d)% after (\d+) (generations|trials)"
            r" \((.*); (\d+) case runs, (\d+) crashed; \d+ s\)$",
            line,
        )
        if found:
            method, seed = found.group(1), found.group(2)
            gaps[method].append(float(found.group(3)))
            seeds[method].add(seed)
            spent[method, seed] = int(found.group(7))
            if method.startswith("optuna"):
                budget = re.match(r"\d+ of (\d+) case runs", found.group(6))
                assert budget is not None, line
                budgets[method, seed] = int(budget.group(1))
            else:
                assert int(found.group(4)) == 3
    assert [len(v) for v in gaps.values()] == [2, 2, 2, 2], result.stdout
    assert all(s == {"7", "8"} for s in seeds.values())  # --first-seed 7, two seeds
    for seed in (
        "7",
        "8",
    ):  # Optuna alone spends what the default spent, less than one trial of dev cases below
        for method in METHODS[2:]:
            assert budgets[method, seed] == spent["default", seed]
            assert 0 <= spent["default", seed] - spent[method, seed] < 10
    assert "2 seeds per method (7 to 8)" in result.stdout
    row = next(line for line in result.stdout.splitlines() if line.startswith("| tune | curve | 134"))
    cells = [c.strip().rstrip("%") for c in row.strip("|").split("|")]
    start, reference = float(cells[2]), float(cells[3])
    assert reference == 0.0 and start > 50
    for i, method in enumerate(METHODS):
        assert float(cells[4 + 2 * i]) == pytest.approx(statistics.mean(gaps[method]), abs=0.006)
        assert float(cells[5 + 2 * i]) == max(gaps[method])
    for method in METHODS[:2]:
        assert max(gaps[method]) <= start  # three generations on the curve do not overfit past its start
    spend = next(
        line for line in result.stdout.splitlines() if line.startswith("| tune | curve | ") and line != row
    )
    cells = [c.strip() for c in spend.strip("|").split("|")]
    for i, method in enumerate(METHODS):
        assert float(cells[2 + 2 * i]) == pytest.approx(
            statistics.mean(spent[method, s] for s in "78"), abs=0.5
        )
    assert "best programs holding a branch no dev instance of their run reaches: " in result.stdout
    assert len(saved.read_text().splitlines()) == 8
    again = benchmark(*args, "--save", str(saved), "--tables-only")  # the tables again, from the saved runs
    assert again.returncode == 0, again.stderr
    assert row in again.stdout and spend in again.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--half", "check", "--families", "curve"],
            "no family curve in half 'check'; known: binpack_weibull, cache, depots, restock, scheduling, shipping, tour",
        ),
        (["--jobs", "0"], "argument --jobs: expected a whole number of at least 1, not '0'"),
        (["--first-seed", "-1"], "--first-seed: expected a whole number of at least 0"),
        (
            ["--methods", "optuna-tpe"],
            "optuna methods without the default: give their budget with --case-runs",
        ),
        (["--tables-only"], "--tables-only: name the runs' file with --save"),
    ],
)
def test_bad_arguments_are_one_line_naming_what_is_wrong(args: list[str], message: str) -> None:
    result = benchmark(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
