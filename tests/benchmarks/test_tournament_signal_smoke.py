"""benchmarks/tournament_signal.py -n 12: the main job's matches, read under seed 000's rules and the rule before."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(
    r"^(.+?)\s+ties\s+(\d+) of\s+(\d+) .*Kendall tau, kept ratings vs dev scores\s+(-?[\d.]+|n/a)", re.M
)


@pytest.mark.e2e
def test_seed_rules_tell_the_kept_candidates_apart_where_the_clamped_score_ties() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "tournament_signal.py"), "-n", "12"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rows = {
        label.strip(): (int(ties), int(played), tau) for label, ties, played, tau in LINE.findall(done.stdout)
    }
    seed, before = rows["seed 000 (this run)"], rows["clamped score, before"]
    assert seed[1] == before[1] > 0
    assert seed[0] < seed[1] / 2 < before[0]
    assert float(seed[2]) >= 0.6
