"""benchmarks/report_size.py at a few generations: runs in a subprocess and prints the report's size against the
2 MB cap and its build time against the fold of the same events."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def test_report_size_benchmark_prints_size_and_time() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/report_size.py",
            "--generations",
            "4",
            "--cases",
            "12",
            "--gate",
            "keep-all",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "stopped: reached 4 generations" in done.stdout
    size = re.search(r"report\s+(\d+) KiB\s+\((\d\.\d\d) x the 2 MB cap", done.stdout)
    assert size and int(size.group(1)) > 0 and float(size.group(2)) < 1.0
    assert re.search(r"build \+ render report\s+[\d.]+ s\s+\([\d.]+ x the fold\)", done.stdout)
