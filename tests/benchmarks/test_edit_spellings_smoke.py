"""benchmarks/edit_spellings.py: runs in a subprocess and prints, per spelling, the failed edits of each operator."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def spellings(*args: str) -> subprocess.CompletedProcess[str]:
    """``benchmarks/edit_spellings.py`` run with ``args``, as a user runs it."""
    script = ROOT / "benchmarks" / "edit_spellings.py"
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300)


def test_edit_spellings_counts_the_edits_that_fail_per_spelling_and_operator() -> None:
    result = spellings("--draws", "10")
    assert result.returncode == 0, result.stderr
    rows = {
        m.group(1): [(int(f), int(n)) for f, n in re.findall(r"(\d+)/(\d+)", m.group(2))]
        for line in result.stdout.splitlines()
        if (m := re.match(r"\| ([^|]+?) \| (\d.*) \|$", line))
    }
    assert len(rows) == 11 and all(len(cells) == 6 for cells in rows.values()), result.stdout
    for name in (
        "two numbers",
        "filled by index",
        "negated np.array",
        "numpy, unannotated, after a crash",
        "dict comprehension",
        "map of a lambda",
    ):
        assert all(failed == 0 and made == 10 for failed, made in rows[name][:4]), (name, rows[name])
    # the unannotated function as first written: a guard asks an array for one truth value
    assert rows["numpy, unannotated"][0] == (10, 10)


def test_edit_spellings_refuses_a_draw_count_below_one() -> None:
    result = spellings("--draws", "0")
    assert result.returncode == 2 and "--draws must be at least 1" in result.stderr
