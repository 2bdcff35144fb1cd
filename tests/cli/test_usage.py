"""Usage errors (unknown option or command, bad choice, bad number, missing argument) get typer's usage message
and exit status 2, from the real `assay` command in a subprocess; "internal error" is for bugs only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

USAGE_ERRORS = [
    (["eval", "--bogus"], "No such option: --bogus"),
    (["nosuch"], "No such command 'nosuch'"),
    (["eval", "--split", "nope"], "Invalid value for --split"),
    (["eval", "--split", "train"], "Invalid value for --split"),
    (["evolve", "--preset", "huge"], "Invalid value for --preset"),
    (["eval", "-j", "-3"], "Invalid value for '--concurrency'"),
    (["eval", "-j", "many"], "Invalid value for '--concurrency'"),
    (["eval", "-j", "5000"], "Invalid value for '--concurrency'"),
    (["serve", "--port", "99999"], "Invalid value for '--port'"),
    (["rate"], "Missing argument"),
    (["status", "a", "b", "c"], "unexpected extra argument"),
]


@pytest.mark.parametrize(
    ("args", "message"), USAGE_ERRORS, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
@pytest.mark.e2e
def test_usage_error_prints_usage_and_exits_2(tmp_path: Path, args: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assay", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "300", "HOME": str(tmp_path)},
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Usage: assay" in done.stderr
    assert message.lower() in done.stderr.lower()
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_no_arguments_prints_help_and_version_works(tmp_path: Path) -> None:
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "assay", *a], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    bare = run()
    assert bare.returncode == 2 and "Commands" in bare.stdout + bare.stderr
    version = run("--version")
    assert version.returncode == 0 and version.stdout.startswith("assay ")
