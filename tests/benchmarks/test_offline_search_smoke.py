"""benchmarks/offline_search.py end to end: real runs of `assay evolve` on a family, a line per run, the table."""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.e2e
def test_the_benchmark_prints_a_line_per_run_and_a_table_of_their_mean_and_worst() -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "offline_search.py"),
            *("--half", "tune", "--families", "curve", "--seeds", "2"),
            *("--first-seed", "7", "--generations", "3"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    gaps: dict[str, list[float]] = {"default": [], "random": []}
    seeds: dict[str, set[str]] = {"default": set(), "random": set()}
    for line in result.stdout.splitlines():
        found = re.match(
            r"\[\d/4\] tune curve (default|random) seed ([78]): unseen gap (\d+\.\d\d)% after (\d+)", line
        )
        if found:
            gaps[found.group(1)].append(float(found.group(3)))
            seeds[found.group(1)].add(found.group(2))
            assert int(found.group(4)) == 3
    assert [len(v) for v in gaps.values()] == [2, 2], result.stdout
    assert seeds == {"default": {"7", "8"}, "random": {"7", "8"}}  # --first-seed 7, two seeds
    assert "2 seeds per method (7 to 8)" in result.stdout
    row = next(line for line in result.stdout.splitlines() if line.startswith("| tune | curve |"))
    cells = [c.strip().rstrip("%") for c in row.strip("|").split("|")]
    start, reference = float(cells[2]), float(cells[3])
    assert reference == 0.0 and start > 50
    for i, method in ((4, "default"), (6, "random")):
        assert float(cells[i]) == pytest.approx(statistics.mean(gaps[method]), abs=0.006)
        assert float(cells[i + 1]) == max(gaps[method])
        assert max(gaps[method]) <= start  # three generations on the curve do not overfit past its start
    assert "best programs holding a branch no dev instance of their run reaches: " in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--half", "check", "--families", "curve"],
            "no family curve in half 'check'; known: binpack_weibull, scheduling, tour",
        ),
        (["--jobs", "0"], "argument --jobs: expected a whole number of at least 1, not '0'"),
        (["--first-seed", "-1"], "--first-seed: expected a whole number of at least 0"),
    ],
)
def test_bad_arguments_are_one_line_naming_what_is_wrong(args: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "offline_search.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
