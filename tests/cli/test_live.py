"""The live view of `assay evolve` in a real pseudo-terminal, and the plain lines when output is a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from assay.cli.live import RunLimits, status_lines
from assay.config import EvolveConfig
from assay.history.runfiles import read_events
from assay.loop.events import typed_events
from assay.loop.state import LoopState, fold
from tests.loop.conftest import make_project

pytestmark = pytest.mark.e2e


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


def test_evolve_shows_a_live_view_in_a_terminal_and_lines_in_a_pipe(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", cases=10, items=60)
    code, screen = run_in_terminal([sys.executable, "-m", "assay", "evolve", "-n", "3"], root)
    assert code == 0, screen
    for label in ("generation", "best so far", "case runs", "left"):
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
    assert rows["left"] == "~0s for 0 more generations at most"
