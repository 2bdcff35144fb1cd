"""Where init and eval run the cases: a temporary copy of the project (of a commit, or of the work tree as it
is), at the artifact root's place in it; in place outside a repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.config import load_config
from assay.evaluation.workcopy import project_copy, repository_of
from tests.repos import committed

CONFIG = "artifact: {kind: code, paths: [solve.py]}\ncases: {files: [cases.yaml]}\nrunner: {type: command, command: 'python3 solve.py'}\n"


def test_outside_a_repository_the_cases_run_in_place(tmp_path: Path) -> None:
    (tmp_path / "assay.yaml").write_text(CONFIG)
    config = load_config(tmp_path / "assay.yaml")
    assert repository_of(config) is None
    with project_copy(config, None) as copy:
        assert copy is None


@pytest.mark.e2e
def test_the_copy_holds_the_commit_or_the_work_tree_at_the_artifact_roots_place(tmp_path: Path) -> None:
    root = committed(
        tmp_path / "repo", {"app/assay.yaml": CONFIG, "app/solve.py": "print(1)\n", "lib/x.py": ""}
    )
    (root / "app" / "solve.py").write_text("print(2)\n")
    (root / "app" / "notes.log").write_text("untracked\n")
    (root / "app" / ".assay").mkdir()
    (root / "app" / ".assay" / "assay.db").write_text("run data, not ignored here")
    config = load_config(root / "app" / "assay.yaml")
    git = repository_of(config)
    assert git is not None and git.root == root.resolve()
    with project_copy(config, git, commit=git.head()) as at_commit:
        assert at_commit is not None and at_commit.name == "app" and at_commit.parent.name == "repo"
        assert (at_commit / "solve.py").read_text() == "print(1)\n" and not (at_commit / "notes.log").exists()
        assert (at_commit.parent / "lib" / "x.py").is_file()  # the whole commit, as a run's worktree has it
        (at_commit / "out.txt").write_text("a runner's output")
    with project_copy(config, git) as now:
        assert now is not None and (now / "solve.py").read_text() == "print(2)\n"
        assert (now / "notes.log").read_text() == "untracked\n" and not (now / "out.txt").exists()
        assert not (now / ".assay").exists()  # the run data stays out
    assert not at_commit.exists() and not now.exists()
    assert sorted(p.name for p in (root / "app").iterdir()) == [
        ".assay",
        "assay.yaml",
        "notes.log",
        "solve.py",
    ]
