"""benchmarks/serve_load.py runs end to end on a small load and prints its table with ratios to the bare endpoint."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.extras import need

need("serve")

ROOT = Path(__file__).resolve().parents[2]


def test_the_load_benchmark_reports_every_scenario() -> None:
    command = [sys.executable, "benchmarks/serve_load.py", "--requests", "40", "--concurrency", "4"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[2:] if line.strip()}
    assert sorted(rows) == ["bare", "feedback", "select"]
    assert rows["bare"][5:] == ["1.00", "1.00", "1.00"]
    for name in ("feedback", "select"):
        rps, p50, p99, errors = (float(x) for x in rows[name][1:5])
        assert rps > 0 and 0 < p50 <= p99 and errors == 0
