"""benchmarks/overfitting_rule.py at a small trial count: runs in a subprocess and prints a row per scenario and
holdout size, the paired rule's false positives low and the seed's gap rule's high on four holdout cases."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_benchmark_prints_both_rules_rates_per_scenario_and_holdout_size() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/overfitting_rule.py", "--trials", "80"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = {
        (line.split()[0], int(line.split()[1])): line.split()[2:]
        for line in done.stdout.splitlines()
        if line.split() and line.split()[0] in ("binpack", "judged", "neutral")
    }
    assert sorted(rows) == [(s, n) for s in ("binpack", "judged", "neutral") for n in (4, 10, 40)]
    paired, _, gap, _ = (float(cell.rstrip("%")) for cell in rows[("binpack", 4)])
    assert paired < 10 < 15 < gap  # ~2% against ~28%
    assert rows[("neutral", 10)][1] == "-"  # no gain: nothing to be on dev only
    assert "80 simulated candidates per cell" in done.stdout
