"""Real git repositories in tmp_path for the history tests, checked with independent git calls."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from assay.faults import FAULT_VAR
from assay.history import Git
from tests.layers import e2e_fixture


@pytest.fixture
def no_user_git_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as on a machine where git was never configured (no global or system config)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in (
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_DIR",
    ):
        monkeypatch.delenv(var, raising=False)


def sh(cwd: Path, *args: str) -> str:
    """An independent git call (not through assay) to check what the code under test did."""
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
@e2e_fixture("a git repository")
def repo(tmp_path: Path) -> Git:
    root = tmp_path / "project"
    write(root / "prompt.md", "be brief\nbe kind\n")
    write(root / "src" / "a.py", "x = 1\n")
    write(root / ".gitignore", "*.log\n.assay/\n")
    write(root / "debug.log", "noise\n")
    return Git.init(root)


def candidate(git: Git, wt: Path, edits: dict[str, str | None], message: str = "gen 1") -> str:
    """Make a candidate commit in worktree ``wt`` at HEAD: write (or delete, for None) files and commit."""
    git.add_worktree(wt, git.head())
    for name, text in edits.items():
        if text is None:
            (wt / name).unlink()
        else:
            write(wt / name, text)
    sha = git.commit_all(wt, message)
    assert sha is not None
    return sha


def commit_as_user(root: Path, name: str, text: str, message: str = "user work") -> str:
    """The user's own commit of one file, with git's own identity options; its sha."""
    write(root / name, text)
    sh(root, "add", name)
    sh(root, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "-m", message)
    return sh(root, "rev-parse", "HEAD")


def git_path(root: Path, name: str) -> Path:
    """Where git keeps ``name`` (``MERGE_HEAD``, ``index.lock``, ``refs/heads/main.lock``) for the tree ``root``."""
    return root / sh(root, "rev-parse", "--git-path", name)


def adopt_killed(root: Path, branch: str, commit: str) -> None:
    """``Git.merge_into`` in another process that SIGKILLs itself where the merge is built and the branch has
    not moved yet (``ASSAY_FAULT``); fails unless it died there."""
    code = "import sys; from assay.history import Git; Git(sys.argv[1]).merge_into(sys.argv[2], sys.argv[3])"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(root), branch, commit],
        env={**os.environ, FAULT_VAR: "adopt:before-ref-update"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
