"""``assay status`` and ``assay log`` tell the truth: the best candidate's holdout as the evolve summary gave
it, and a run whose process is gone as interrupted."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import assay, git

pytestmark = pytest.mark.e2e


def rows(table: str) -> list[list[str]]:
    """The body rows of a rich table, one list of stripped cells per row."""
    return [[cell.strip() for cell in line.split("│")[1:-1]] for line in table.splitlines() if "│" in line]


def status_row(project: Path) -> dict[str, str]:
    status = assay("status", cwd=project)
    assert status.returncode == 0, status.stderr
    columns = ["run", "status", "generations", "baseline dev", "best dev", "best holdout", "stop reason"]
    (row,) = rows(status.stdout)
    return dict(zip(columns, row, strict=True))


def test_status_log_diff_and_adopt_show_the_best_the_summary_printed(project):
    assert assay("init", cwd=project).returncode == 0
    evolve = assay("evolve", cwd=project)
    assert evolve.returncode == 0, evolve.stderr
    holdout = re.search(r"holdout score\s+([\d.]+) -> ([\d.]+)", evolve.stdout)
    best = re.search(r"best (cand-\d{4}) \(([0-9a-f]{12})\)", evolve.stdout)
    assert holdout and best, evolve.stdout
    summary_holdout, best_id, best_commit = holdout.group(2), best.group(1), best.group(2)

    row = status_row(project)
    assert row["best holdout"] == summary_holdout
    assert row["status"] == "finished"

    log = assay("log", cwd=project)
    assert log.returncode == 0, log.stderr
    assert "finished" in log.stdout and "interrupted" not in log.stdout
    (best_row,) = [r for r in rows(log.stdout) if r[1] == best_id]
    assert best_row[6] == summary_holdout  # the holdout column of the best candidate's own row

    base = git(project, "rev-parse", "HEAD")
    diff = assay("diff", "best", cwd=project)
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout == git(project, "diff", base, best_commit) + ("\n" if diff.stdout else "")
    adopt = assay("adopt", "best", cwd=project)
    assert adopt.returncode == 0, adopt.stderr
    assert f"to {best_id} ({best_commit})" in adopt.stdout


LONG_RUN = {"plateau: 20": "plateau: 1000", "discards_per_layer: 8": "discards_per_layer: 100"}
GENERATIONS = 25


def start(project: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "assay", *args, "-n", str(GENERATIONS)],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )


def wait_for_rows(proc: subprocess.Popen[str], results: Path, rows: int) -> None:
    """Wait until results.tsv has ``rows`` lines (the header included) while ``proc`` still runs."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if results.exists() and len(results.read_text().splitlines()) >= rows:
            return
        time.sleep(0.05)
    assert proc.poll() is None, f"the run ended too soon: {proc.communicate()}"
    raise AssertionError(f"{results} did not reach {rows} lines")


def test_a_killed_run_is_interrupted_until_resumed(project):
    config = project / "assay.yaml"
    text = config.read_text()
    for old, new in LONG_RUN.items():
        text = text.replace(old, new)
    config.write_text(text + "  stop_on_oscillation: false\n  target_pass_rate: null\n")
    assert assay("init", cwd=project).returncode == 0
    proc = start(project, "evolve")
    deadline = time.monotonic() + 60
    while not list((project / ".assay" / "runs").glob("*/results.tsv")) and time.monotonic() < deadline:
        time.sleep(0.05)
    (results,) = (project / ".assay" / "runs").glob("*/results.tsv")
    wait_for_rows(proc, results, 3)  # the header, the baseline and a generation

    assert status_row(project)["status"] == "running"
    twice = assay("resume", cwd=project)
    assert twice.returncode == 2 and "is running in another process" in twice.stderr
    assert proc.poll() is None, "the run ended while status ran; it needs to last longer"
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)

    killed = assay("status", cwd=project)
    assert killed.returncode == 0, killed.stderr
    assert "interrupted (continue with `assay resume`)" in killed.stdout
    assert "running" not in killed.stdout
    log = assay("log", cwd=project)
    assert "interrupted (continue with `assay resume`)" in log.stdout

    rows_before = len(results.read_text().splitlines())
    proc = start(project, "resume")
    wait_for_rows(proc, results, rows_before + 1)
    assert status_row(project)["status"] == "running"  # resumed: running again while it runs
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert f"stopped: reached {GENERATIONS} generations" in out
    done = status_row(project)
    assert done["status"] == "finished"
    assert done["generations"] == str(GENERATIONS)
    assert "interrupted" not in assay("log", cwd=project).stdout
