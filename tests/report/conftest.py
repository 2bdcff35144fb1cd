"""Real runs to report on (the bin-packing example, run by the CLI as a user runs it) and a headless Chromium."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.layers import e2e_fixture
from tests.loop.conftest import make_project

from .browser import Browser, need_chromium


def assay(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m assay ARGS`` in ``cwd``, as a user runs it."""
    env = {**os.environ, "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=cwd, capture_output=True, text=True, timeout=600, env=env
    )


def evolved(root: Path, generations: int, **env: str) -> Path:
    """``root`` (a fresh bin-packing project) after ``assay evolve -n generations``."""
    make_project(root, cases=10, items=60, extra="evolve: {discards_per_layer: 6, plateau: 30}\n")
    done = assay("evolve", "-n", str(generations), cwd=root, env=env)
    assert done.returncode in (0, -9), done.stderr
    return root


@pytest.fixture(scope="module")
@e2e_fixture("a git repository (an evolved run)")
def binpack_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished bin-packing run of 12 generations."""
    return evolved(tmp_path_factory.mktemp("report") / "binpack", 12)


@pytest.fixture(scope="module")
@e2e_fixture("a browser")
def browser() -> Iterator[Browser]:
    chromium = need_chromium()
    page = Browser(chromium)
    try:
        yield page
    finally:
        page.close()


@pytest.fixture(scope="module")
@e2e_fixture("a git repository (an evolved run)")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots are kept: ``$ASSAY_TEST_ARTIFACTS`` when set (CI keeps it), else a temp dir."""
    folder = os.environ.get("ASSAY_TEST_ARTIFACTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path
