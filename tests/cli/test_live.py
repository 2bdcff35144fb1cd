"""The live view of `assay evolve` in a real pseudo-terminal, and the plain lines when output is a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from assay.cli.live import RunLimits, status_lines, time_row
from assay.config import EvolveConfig
from assay.history.runfiles import read_events
from assay.loop.events import typed_events
from assay.loop.state import LoopState, fold
from tests.loop.conftest import make_project


def run_in_terminal(args: list[str], cwd: Path) -> tuple[int, str]:
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "LINES": "40", "TERM": "xterm"}
    proc = subprocess.Popen(args, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=300), b"".join(chunks).decode("utf-8", "replace")


def limits(generations: int = 10, wall_clock_s: float | None = None) -> RunLimits:
    return RunLimits(generations, wall_clock_s, None, None, None)


@pytest.mark.parametrize(
    ("elapsed", "generation", "budget", "row"),
    [
        (10.0, 0, limits(wall_clock_s=3600), "10s of 3600s (the wall clock)"),
        (10.0, 0, limits(), "10s"),
        (30.0, 3, limits(100, 3600), "30s, ~970s left at most (97 more generations)"),
        (3000.0, 50, limits(100, 3600), "3000s, ~600s left at most (the wall clock, 3600s)"),
        (40.0, 9, limits(10), "40s, ~4s left at most (1 more generation)"),
    ],
)
def test_the_time_row_is_one_budget(elapsed: float, generation: int, budget: RunLimits, row: str) -> None:
    assert time_row(elapsed, generation, budget) == row


@pytest.mark.e2e
def test_evolve_shows_a_live_view_in_a_terminal_and_lines_in_a_pipe(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", cases=10, items=60)
    code, screen = run_in_terminal([sys.executable, "-m", "assay", "evolve", "-n", "3"], root)
    assert code == 0, screen
    for label in ("generation", "best so far", "case runs", "time"):
        assert label in screen
    assert "gen   3" in screen and "stopped:" in screen

    piped = subprocess.run(
        [sys.executable, "-m", "assay", "evolve", "-n", "2"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert piped.returncode == 0, piped.stderr
    assert "best so far" not in piped.stdout and "gen   2" in piped.stdout

    (run_dir, *_) = sorted((root / ".assay" / "runs").iterdir())
    run = fold(LoopState.new(), typed_events(read_events(run_dir))).view()
    rows = dict(status_lines(run, RunLimits.of(EvolveConfig(max_evaluations=1000), 3, 60.0), elapsed=30.0))
    assert rows["generation"] == "3 / 3"
    assert rows["case runs"].endswith(f"{run.spent.case_runs / 1000:.0%})")
    assert rows["best so far"].startswith(run.best.candidate_id) if run.best else False
    assert rows["time"] == "30s, ~0s left at most (0 more generations)"
    assert "left" not in rows  # one time budget, not two
