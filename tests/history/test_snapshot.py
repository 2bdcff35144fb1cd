"""Copies of a repository in a temporary folder: of a commit, or of the work tree as it is; the user's tree,
index and refs are left exactly as they were."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from assay.history import Git
from assay.history.snapshot import copy_commit, copy_work_tree, scratch_folder

from .conftest import sh, write

pytestmark = pytest.mark.e2e


def files_in(root: Path) -> dict[str, bytes | str]:
    """Every file under ``root`` (a symbolic link as its target), by POSIX path."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            found[rel] = path.read_bytes()
    return found


def prepared(repo: Git) -> tuple[str, dict[str, bytes | str], str]:
    """The repository with a committed script and link, then edits of every kind; HEAD, the tree, the index."""
    script = write(repo.root / "run.sh", "echo hi\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (repo.root / "link.md").symlink_to("prompt.md")
    sh(repo.root, "add", "-A")
    sh(repo.root, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "script")
    head = repo.head()
    write(repo.root / "prompt.md", "edited, not committed\n")
    (repo.root / "src" / "a.py").unlink()
    write(repo.root / "notes.txt", "untracked\n")
    write(repo.root / ".assay" / "runs" / "x.json", "{}\n")  # ignored: run data
    write(repo.root / "data" / "big.log", "ignored\n")
    return head, files_in(repo.root), sh(repo.root, "ls-files", "--stage")


def test_a_commit_is_copied_as_a_checkout_would_write_it(repo: Git) -> None:
    head, before, index = prepared(repo)
    with scratch_folder() as scratch:
        copy_commit(repo, head, scratch)
        copied = files_in(scratch)
        assert copied == {
            ".gitignore": b"*.log\n.assay/\n",
            "link.md": "-> prompt.md",
            "prompt.md": b"be brief\nbe kind\n",
            "run.sh": b"echo hi\n",
            "src/a.py": b"x = 1\n",
        }
        assert os.access(scratch / "run.sh", os.X_OK)
    assert not scratch.exists()
    assert files_in(repo.root) == before and sh(repo.root, "ls-files", "--stage") == index
    assert repo.head() == head


def test_the_work_tree_is_copied_as_it_is_without_ignored_files_and_run_data(repo: Git) -> None:
    head, before, index = prepared(repo)
    write(repo.root / "scratch" / "run-data" / "x.txt", "skipped\n")
    with scratch_folder() as scratch:
        copy_work_tree(repo, scratch, skip=["scratch/run-data"])
        assert files_in(scratch) == {
            ".gitignore": b"*.log\n.assay/\n",
            "link.md": "-> prompt.md",
            "notes.txt": b"untracked\n",
            "prompt.md": b"edited, not committed\n",
            "run.sh": b"echo hi\n",
        }
        assert os.access(scratch / "run.sh", os.X_OK)
        locked = scratch / "locked"
        locked.mkdir()
        write(locked / "f", "x")
        locked.chmod(0o500)  # a program left a folder it cannot delete from: the copy still goes
    assert not scratch.exists()
    assert files_in(repo.root) == {**before, "scratch/run-data/x.txt": b"skipped\n"}
    assert sh(repo.root, "ls-files", "--stage") == index and repo.head() == head
