"""benchmarks/eval_overhead.py runs every part end to end on a small scale and prints its ratios (the figures
themselves belong to the benchmark, not to a timed test)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# The fast layer runs these without the jail (as on a machine without bubblewrap): the jail is not what they
# test; tests/sandbox and the e2e attack tests prove it.
pytestmark = pytest.mark.usefixtures("no_bwrap")

ROOT = Path(__file__).resolve().parents[2]


def test_every_part_runs_and_reports_its_ratio() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "eval_overhead.py"),
            "--cases",
            "12",
            "--repeats",
            "1",
            "--llm-cases",
            "8",
            "--load-cases",
            "300",
            "--whole-repeats",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    out = done.stdout
    assert "(a) command runner `/bin/echo {input}`, 12 cases" in out and "assay/this = " in out
    assert "traces (keep: all): 12 in one log, per 1,000 cases " in out and "gzipped (traces.compress)" in out
    assert "(c) concurrency sweep" in out and out.count("\n    ") >= 4
    for level in (1, 4, 16, 64):
        assert f"\n    {level:11d}   " in out
    assert "(d) llm runner, 8 cases" in out and "assay/bare = " in out
    assert "(e) start-up" in out and "assay --version" in out and "assay --help" in out
    assert "(f) loading 300 cases" in out and "memory " in out
    assert "(g) whole processes, `/bin/echo {input}`, 12 cases" in out
    for line in ("bare script (thread pool)", "assay eval -q, sandbox: none", "first case starts after"):
        assert line in out
    # The machine and its load before the figures; each figure's spread; a first eval and a repeat apart.
    assert out.startswith("machine: ") and " cores), kernel " in out.splitlines()[0] and "; load " in out
    assert "assay eval -q, sandbox: none, first eval (no .assay/)" in out
    assert "assay eval -q, sandbox: none, repeat" in out and "spread " in out and "the first eval " in out
    assert "x the bare script" in out and "llm runner, 8 cases, 100 ms server" in out
    assert "(target >= 0.9)" in out and "(target >= 0.85)" not in out
    assert "CPU per call (slope 1 -> 8 cases)" in out and "beyond the SDK" in out
