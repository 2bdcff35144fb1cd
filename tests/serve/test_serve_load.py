"""benchmarks/serve_load.py runs end to end on a small load, on SQLite and on two PostgreSQL replicas, prints its
table with ratios to the bare endpoint, and checks the state after every feedback round."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.extras import missing_modules, need, required, unavailable
from tests.pg import pg_bin

pytestmark = pytest.mark.e2e

need("serve")

ROOT = Path(__file__).resolve().parents[2]


def test_the_load_benchmark_reports_every_scenario_and_checks_the_state() -> None:
    backends = "sqlite,postgres"
    if missing_modules("postgres") or pg_bin() is None:
        if required():
            unavailable("the PostgreSQL half needs psycopg and the server binaries (initdb, pg_ctl)")
        backends = "sqlite"  # the SQLite half still runs where PostgreSQL is missing
    command = [
        sys.executable,
        "benchmarks/serve_load.py",
        *("--requests", "40", "--concurrency", "4", "--rounds", "2", "--backends", backends),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    rows = [line.split() for line in lines[2:] if line.split() and line.split()[0] in ("sqlite", "postgres")]
    expected = [(b, s) for b in backends.split(",") for s in ("bare", "feedback", "select")]
    assert [(r[0], r[2]) for r in rows] == expected
    for row in rows:
        replicas, rps, p50, p99, x_rps, x_p50, x_p99, cpu = (float(x) for x in row[1:2] + row[3:])
        assert replicas == (1 if row[0] == "sqlite" else 2)
        assert rps > 0 and 0 < p50 <= p99 and x_rps > 0 and cpu >= 0
        if row[2] == "bare":
            assert (x_rps, x_p50, x_p99) == (1.0, 1.0, 1.0)
    spreads = [line.split() for line in lines if line.startswith("spread ")]
    assert [(s[1], s[2]) for s in spreads] == [
        (b, s) for b in backends.split(",") for s in ("feedback", "select")
    ]
    for s in spreads:
        low, middle, high = float(s[7]), float(s[9]), float(s[11])
        assert 0 < low <= middle <= high and s[13] == "2"
    machine = next(line for line in lines if line.startswith("machine: "))
    assert "cores" in machine and "kernel" in machine
    databases = [line for line in lines if line.startswith("database: ")]
    expected_databases = ["database: SQLite", "database: PostgreSQL"][: len(backends.split(","))]
    assert [
        line[: len(e)] for line, e in zip(databases, expected_databases, strict=True)
    ] == expected_databases
    checks = [line for line in lines if line.startswith("check ")]
    assert len(checks) == 2 * len(backends.split(","))
    assert all("MISMATCH" not in line and "replay - stored" in line for line in checks), checks
