"""Deny by default: which entries of a work directory the jail masks, planned without running bubblewrap (the
jail itself is proven in tests/runners/test_candidate_attacks.py)."""

from __future__ import annotations

import os
from pathlib import Path

from assay.sandbox.jail import BwrapStatus, Jail, WorkdirJail, jail_argv, scratch_file
from assay.sandbox.survey import literal, masked_entries, unshown_path

STATUS = BwrapStatus("/usr/bin/bwrap")


def tree(root: Path, *files: str) -> Path:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    return root


def test_only_what_is_shown_and_the_directories_on_the_way_stay(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        "candidate.py",
        "notes.md",
        "key/answers.txt",
        "key/deeper/more.txt",
        "pkg/__init__.py",
        "pkg/mod.py",
        "pkg/other.py",
        "pkg/data/table.csv",
        "src/x/a.py",
        "src/x/readme.md",
        "src/y/b.txt",
        ".git/config",
    )
    os.symlink("key/answers.txt", root / "link")
    shown = ["candidate.py", "pkg/mod.py", "pkg/__init__.py", "src/**/*.py"]
    masked = masked_entries(root, shown, hidden={root / ".git"})
    assert sorted(p.relative_to(root).as_posix() for p in masked) == [
        "key",  # one mount for a directory that holds nothing shown
        "notes.md",
        "pkg/data",
        "pkg/other.py",
        "src/x/readme.md",
        "src/y",
    ]


def test_a_pattern_for_the_whole_artifact_masks_nothing(tmp_path: Path) -> None:
    root = tree(tmp_path, "a.txt", "b/c.txt")
    assert masked_entries(root, ["."]) == []
    assert masked_entries(root, ["b"]) == [root / "a.txt"]


def test_glob_characters_in_a_runner_file_name_match_only_it(tmp_path: Path) -> None:
    root = tree(tmp_path, "run[1].py", "run1.py")
    assert masked_entries(root, [literal("run[1].py")]) == [root / "run1.py"]


def test_the_survey_holds_until_the_evaluation_ends(tmp_path: Path) -> None:
    """Files a candidate writes during an evaluation stay visible to the next case; the next evaluation masks
    what is then in the work directory."""
    root = tree(tmp_path / "wt", "candidate.py", "key/answers.txt").resolve()
    plan = WorkdirJail(hidden=("cases.yaml",), shown=("candidate.py",))
    assert root / "key" in plan.for_workdir(root).scratch
    tree(root, "out/report.json")
    jail = plan.for_workdir(root)
    assert root / "out" not in jail.scratch and root / "key" in jail.scratch
    assert jail.scratch_dir is not None and jail.scratch_dir.is_dir()
    plan.forget(root)
    assert not jail.scratch_dir.exists()  # what candidates wrote over masked files goes with the survey
    again = plan.for_workdir(root)
    assert {root / "out", root / "key"} <= set(again.scratch) and again.hidden == (root / "cases.yaml",)


def test_without_shown_patterns_only_the_hidden_paths_are_masked(tmp_path: Path) -> None:
    root = tree(tmp_path / "wt", "candidate.py", "key/answers.txt").resolve()
    jail = WorkdirJail(hidden=("cases.yaml",)).for_workdir(root)
    assert (jail.hidden, jail.scratch) == ((root / "cases.yaml",), ())


def test_read_only_entries_are_shown(tmp_path: Path) -> None:
    root = tree(tmp_path / "wt", "candidate.py", "data/table.csv", "data/other.csv").resolve()
    jail = WorkdirJail(read_only=("data/table.csv",), shown=("candidate.py",)).for_workdir(root)
    assert jail.scratch == (root / "data" / "other.csv",)
    assert jail.read_only == (root / "data" / "table.csv",)


def test_masked_directories_get_an_empty_mount_and_masked_files_an_empty_file(tmp_path: Path) -> None:
    # What the survey masks takes writes (lost): a candidate may rewrite what an earlier one left. What the
    # configuration hides (case files, check files) is read-only.
    root = tree(tmp_path / "wt", "candidate.py", "key/answers.txt", "notes.md", "cases.yaml", "grader/c.py")
    root = root.resolve()
    jail = WorkdirJail(hidden=("cases.yaml", "grader"), shown=("candidate.py",)).for_workdir(root)
    argv = jail_argv(jail, home=None, status=STATUS)
    key, notes = str(root / "key"), str(root / "notes.md")
    at = argv.index(key)
    assert argv[at - 1 : at + 1] == ["--tmpfs", key] and argv[at + 1] != "--remount-ro"
    assert jail.scratch_dir is not None
    stand_in = scratch_file(jail.scratch_dir, root / "notes.md")
    assert argv[argv.index(notes) - 2 : argv.index(notes)] == ["--bind", str(stand_in)]
    assert stand_in.read_bytes() == b""
    cases, grader = str(root / "cases.yaml"), str(root / "grader")
    assert argv[argv.index(cases) - 2 : argv.index(cases)] == ["--ro-bind", "/dev/null"]
    at = argv.index(grader)
    assert argv[at - 1 : at + 3] == ["--tmpfs", grader, "--remount-ro", grader]
    assert str(root / "candidate.py") not in argv
    assert argv.index(key) > argv.index(str(root))  # masked inside the writable bind, after it


def test_a_refusal_names_the_path_the_jail_did_not_show(tmp_path: Path) -> None:
    root = tree(tmp_path / "wt", "candidate.py", "data/x.csv", "shown.csv", "helpers.py").resolve()
    jail = Jail(writable=(root,), hidden=(root / "data", root / "helpers.py"))
    python = "FileNotFoundError: [Errno 2] No such file or directory: 'data/x.csv'"
    assert unshown_path(python, root, jail) == "data/x.csv"
    assert unshown_path("cat: data/x.csv: No such file or directory", root, jail) == "data/x.csv"
    assert unshown_path(
        f"PermissionError: [Errno 13] Permission denied: '{root}/data/x.csv'", root, jail
    ) == (f"{root}/data/x.csv")
    assert unshown_path("No such file or directory: 'data/typo.csv'", root, jail) is None  # not on the host
    assert unshown_path("No such file or directory: 'shown.csv'", root, jail) is None  # shown
    assert unshown_path("ValueError: data/x.csv is malformed", root, jail) is None  # not a refusal
    assert unshown_path("ModuleNotFoundError: No module named 'helpers'", root, jail) == "helpers.py"
    assert unshown_path("ModuleNotFoundError: No module named 'data.x'", root, jail) is None
