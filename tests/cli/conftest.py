"""Running ``assay`` as a user does: a subprocess in a copy of examples/binpack."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "binpack"


def assay(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", **(env or {})}  # wide tables: ids are not folded across lines
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env
    )


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "binpack"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".assay", "__pycache__"))
    cases = root / "cases.yaml"
    lines = cases.read_text().splitlines()
    cases.write_text("\n".join(lines[:12]) + "\n")  # 10 cases: quicker
    config = root / "assay.yaml"
    config.write_text(config.read_text().replace("{vars.seed}", "{vars.seed} 60"))
    return root
