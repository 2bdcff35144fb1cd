"""What a run of a project needs from the user's work tree: the editable files, the harness, the runner's files
and the scripts its checks run; assay.yaml and the cases are read as they are; anything else is left alone."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from assay.config import load_config
from assay.errors import AssayError
from assay.evaluation.session import select_cases
from assay.evaluation.treecheck import check_tree, outside_line, refuse
from assay.history.git import Git
from assay.history.treestatus import StatusEntry, TreeStatus


class StatusOnly:
    """The one thing check_tree asks of a repository: its root and what ``git status`` says."""

    def __init__(self, root: Path, entries: list[tuple[str, str]]) -> None:
        self.root = root.resolve()
        self.entries = [StatusEntry(code, path) for code, path in entries]

    def status(self) -> list[StatusEntry]:
        return self.entries


def project(tmp_path: Path, runner: str) -> Path:
    root = tmp_path / "repo"
    app = root / "app"
    (app / "pkg").mkdir(parents=True)
    (app / "tools").mkdir()
    for name in ("priority.py", "run.py", "harness.py", "pkg/__init__.py", "pkg/entry.py", "tools/grade.sh"):
        (app / name).write_text("x = 1\n")
    (app / "cases.yaml").write_text(
        "cases:\n  - id: a\n    input: hi\n    checks: [{type: script, value: 'bash tools/grade.sh'}]\n"
    )
    (app / "assay.yaml").write_text(
        "artifact: {kind: code, paths: [priority.py], forbid: [harness.py, assay.yaml, cases.yaml]}\n"
        f"cases: {{files: [cases.yaml]}}\nrunner: {runner}\n"
    )
    return root


def sorted_tree(root: Path, entries: list[tuple[str, str]]) -> TreeStatus:
    config = load_config(root / "app" / "assay.yaml")
    cases = [case for case, _ in select_cases(config).everything]
    return check_tree(config, cast(Git, StatusOnly(root, entries)), cases)


def test_the_files_a_command_run_needs_block_and_others_are_left_alone(tmp_path: Path) -> None:
    root = project(tmp_path, "{type: command, command: 'python3 run.py {input}'}")
    status = sorted_tree(
        root,
        [
            ("??", "app/priority.py"),  # editable
            ("??", "app/run.py"),  # the runner's command runs it
            ("??", "app/harness.py"),  # artifact.forbid: a harness the candidates may not touch
            ("??", "app/tools/grade.sh"),  # a script check runs it in the work directory
            (" M", "README.md"),  # tracked: a run starts from the commit, which lacks this edit
            ("??", "app/assay.yaml"),
            ("??", "app/cases.yaml"),
            ("??", "app/.assay/split.json"),
            ("??", "app/notes.log"),
            ("??", "app/__pycache__/priority.cpython-311.pyc"),
            ("??", "other/scratch.txt"),
        ],
    )
    assert [e.path for e in status.blocking] == [
        "app/priority.py",
        "app/run.py",
        "app/harness.py",
        "app/tools/grade.sh",
        "README.md",
    ]
    assert status.inputs == ("app/assay.yaml", "app/cases.yaml")
    assert status.outside == (
        "app/notes.log",
        "app/__pycache__/priority.cpython-311.pyc",
        "other/scratch.txt",
    )
    assert outside_line(status) == ("not part of the run, left alone: app/ (2 files), other/scratch.txt")
    with pytest.raises(AssayError) as info:
        refuse(status, "assay evolve")
    message = str(info.value)
    assert "\n" not in message and "uncommitted changes" in message and "`assay evolve`" in message
    assert (
        "app/priority.py (untracked), app/run.py (untracked), app/harness.py (untracked) and 2 more"
        in message
    )


def test_a_python_runner_needs_its_module_and_packages(tmp_path: Path) -> None:
    root = project(tmp_path, "{type: python, function: 'pkg.entry:run'}")
    entries = [
        ("??", "app/pkg/entry.py"),
        ("??", "app/pkg/__init__.py"),
        ("??", "app/run.py"),
        ("A ", "app/x.txt"),
    ]
    status = sorted_tree(root, entries)
    assert [(e.code, e.path) for e in status.blocking] == [
        ("??", "app/pkg/entry.py"),
        ("??", "app/pkg/__init__.py"),
        ("A ", "app/x.txt"),
    ]
    assert status.outside == ("app/run.py",)  # this runner never runs it


def test_a_clean_tree_or_one_with_only_a_log_goes_on(tmp_path: Path) -> None:
    root = project(tmp_path, "{type: command, command: 'python3 run.py {input}'}")
    clean = sorted_tree(root, [])
    refuse(clean, "assay init")
    assert outside_line(clean) is None
    logged = sorted_tree(root, [("??", "notes.log")])
    refuse(logged, "assay init")
    assert outside_line(logged) == "not part of the run, left alone: notes.log"
