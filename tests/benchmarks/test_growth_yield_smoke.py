"""benchmarks/growth_yield.py: runs in a subprocess and prints a parseable line per operator and the ratio."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_growth_yield_prints_each_operators_hits_and_the_ratio_to_add_term() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "growth_yield.py"), "--draws", "3", "--trials", "3"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert re.match(r"best fit, unseen: 5\.\d\d% over the L1 bound", lines[0]), lines[0]
    rows = {
        m.group(1): m
        for line in lines
        if (
            m := re.match(
                r"(py\.\w+)\s+(\d+)/3 hits .* best (\d+\.\d\d)%.*: (\d+)/(\d+) hits, .*: (\d+)/(\d+)$", line
            )
        )
    }
    assert set(rows) == {"py.guard", "py.add_term"}
    for row in rows.values():
        # A tuned edit starts from the edit itself; nothing here makes it worse than a sane packer can be.
        assert 0 <= int(row.group(2)) <= 3
        assert 2.0 < float(row.group(3)) < 20.0
        live_hits, live, inert_hits, inert = (int(row.group(i)) for i in range(4, 8))
        assert live + inert == 3 and live_hits + inert_hits == int(row.group(2))
    assert lines[-1].startswith("py.guard yield / py.add_term yield: ")
