"""A run folder written before events were typed (kept as a fixture from that version): `assay status` and
`assay log` still read it; `assay resume` refuses it in one line that says why and what to do."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import make_project

FIXTURE = Path(__file__).parent / "data" / "run-v1"
RUN_ID = "20261201-005652-58d8"


def assay(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "250", "HOME": str(root)},
    )


def test_an_old_run_is_read_but_not_resumed(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", cases=5, items=30)
    shutil.copytree(FIXTURE, root / ".assay")
    status = assay(root, "status")
    assert status.returncode == 0, status.stderr
    assert RUN_ID in status.stdout and "interrupted" in status.stdout
    log = assay(root, "log")
    assert log.returncode == 0, log.stderr
    assert "cand-0008" in log.stdout and "baseline" in log.stdout
    resumed = assay(root, "resume")
    assert resumed.returncode == 2
    lines = resumed.stderr.strip().splitlines()
    assert len(lines) == 1, resumed.stderr
    assert f"run {RUN_ID} cannot be resumed" in lines[0] and "older assay" in lines[0]
    assert "assay evolve" in lines[0] and "Traceback" not in resumed.stderr
    events = (root / ".assay" / "runs" / RUN_ID / "events.ndjson").read_text()
    assert events == (FIXTURE / "runs" / RUN_ID / "events.ndjson").read_text()  # left as it was
