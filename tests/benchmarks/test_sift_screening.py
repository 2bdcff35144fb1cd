"""benchmarks/sift_screening.py's summary: a search that never reached the target shows a bound, never 0.00."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sift_screening.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    """The script as a module; the example's ``harness`` it imports is taken out of the process again."""
    path, had_harness = list(sys.path), "harness" in sys.modules
    spec = importlib.util.spec_from_file_location("sift_screening", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
        if not had_harness:
            sys.modules.pop("harness", None)
    return module


def runs(bench: ModuleType, *spent: tuple[int, bool]) -> list[object]:
    return [
        bench.Result(cost, reached, 0.9, "target reached" if reached else "budget spent")
        for cost, reached in spent
    ]


def test_cost_per_success_is_every_runs_cost_over_the_successes(bench: ModuleType) -> None:
    mine = runs(bench, (300, True), (2500, False), (200, True))
    assert bench.per_success(mine) == 1500
    assert bench.per_success_text(mine) == "1500"


def test_a_search_that_never_reached_the_target_shows_a_lower_bound(bench: ModuleType) -> None:
    never = runs(bench, (2500, False), (2540, False))
    assert bench.per_success_text(never) == ">5040"


def test_ratios_compare_like_with_like(bench: ModuleType) -> None:
    greedy = runs(bench, (1000, True), (2500, False))  # 3500 per success
    better = runs(bench, (700, True), (700, True))  # 700 per success
    never = runs(bench, (2500, False), (2500, False))
    assert bench.ratio_text(better, greedy) == "0.20"
    assert bench.ratio_text(greedy, greedy) == "1.00"
    # Greedy never reached it: its cost per success is above 5000, so the ratio is below 700 / 5000.
    assert bench.ratio_text(better, never) == "<0.14"
    # This search never did: above 5000 / 3500.
    assert bench.ratio_text(never, greedy) == ">1.43"
    assert bench.ratio_text(never, never) == "n/a"
    for mine in (better, never):
        assert bench.ratio_text(mine, never) not in ("0.00", "inf")
