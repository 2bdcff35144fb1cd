"""A run folder written before events were typed (kept as a fixture from that version): `assay status` and
`assay log` still read it; `assay resume` refuses it in one line that says why and what to do."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import assay

from .conftest import make_project

pytestmark = pytest.mark.e2e

FIXTURE = Path(__file__).parent / "data" / "run-v1"
RUN_ID = "20261201-005652-58d8"


def test_an_old_run_is_read_but_not_resumed(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", cases=5, items=30)
    shutil.copytree(FIXTURE, root / ".assay")
    status = assay("status", cwd=root, env={"COLUMNS": "250"})
    assert status.returncode == 0, status.stderr
    assert RUN_ID in status.stdout and "interrupted" in status.stdout
    log = assay("log", cwd=root, env={"COLUMNS": "250"})
    assert log.returncode == 0, log.stderr
    assert "cand-0008" in log.stdout and "baseline" in log.stdout
    resumed = assay("resume", cwd=root, env={"COLUMNS": "250"})
    assert resumed.returncode == 2
    lines = resumed.stderr.strip().splitlines()
    assert len(lines) == 1, resumed.stderr
    assert f"run {RUN_ID} cannot be resumed" in lines[0] and "older assay" in lines[0]
    assert "assay evolve" in lines[0] and "Traceback" not in resumed.stderr
    events = (root / ".assay" / "runs" / RUN_ID / "events.ndjson").read_text()
    assert events == (FIXTURE / "runs" / RUN_ID / "events.ndjson").read_text()  # left as it was
