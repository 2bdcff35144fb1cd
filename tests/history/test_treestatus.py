"""Which changes in a user's work tree block a run, which are named and left alone: the pure sorting rules."""

from __future__ import annotations

from assay.history.treestatus import StatusEntry, name_paths, parse_status, sort_status


def porcelain(*entries: str) -> str:
    return "".join(f"{e}\0" for e in entries)


def test_parse_reads_codes_renames_and_leaves_ignored_out() -> None:
    text = porcelain(
        " M src/a.py", "?? notes.log", "R  new name.py", "old name.py", "!! .assay/", "D  gone.txt"
    )
    entries = parse_status(text)
    assert [(e.code, e.path) for e in entries] == [
        (" M", "src/a.py"),
        ("??", "notes.log"),
        ("R ", "new name.py"),
        ("R ", "old name.py"),
        ("D ", "gone.txt"),
    ]
    assert [e.untracked for e in entries] == [False, True, False, False, False]
    assert parse_status("") == []


def test_a_tracked_change_blocks_an_unneeded_untracked_file_is_outside() -> None:
    entries = parse_status(
        porcelain(" M README.md", "?? notes.log", "?? __pycache__/p.cpython-311.pyc", "A  new.py")
    )
    status = sort_status(entries)
    assert [e.path for e in status.blocking] == ["README.md", "new.py"]
    assert status.outside == ("notes.log", "__pycache__/p.cpython-311.pyc") and status.inputs == ()


def test_needed_untracked_files_block_and_inputs_and_run_data_never_do() -> None:
    entries = parse_status(
        porcelain(
            "?? priority.py",  # editable: the run would start without it
            "?? scratch/todo.txt",
            "?? assay.yaml",  # read from the work tree as it is
            " M cases.yaml",
            " D old-cases.yaml",
            "?? .assay/runs/x/events.ndjson",
            " M .assay/split.json",
        )
    )
    status = sort_status(
        entries,
        skip=[".assay"],
        inputs={"assay.yaml", "cases.yaml", "old-cases.yaml"}.__contains__,
        needed=lambda path: path.endswith(".py"),
    )
    assert [(e.code, e.path) for e in status.blocking] == [("??", "priority.py")]
    assert status.outside == ("scratch/todo.txt",)
    assert status.inputs == ("assay.yaml", "cases.yaml")  # a deleted input has nothing to commit


def test_a_path_is_listed_once() -> None:
    entries = [StatusEntry("MM", "a.py"), StatusEntry("R ", "a.py"), StatusEntry("??", "n.log")]
    status = sort_status([*entries, StatusEntry("??", "n.log")])
    assert [e.path for e in status.blocking] == ["a.py"] and status.outside == ("n.log",)


def test_names_fold_a_folder_and_stop_after_the_limit() -> None:
    assert name_paths(["notes.log"]) == "notes.log"
    assert name_paths(["logs/a.log", "notes.log", "logs/b.log", "tmp/only.txt"]) == (
        "logs/ (2 files), notes.log, tmp/only.txt"
    )
    many = [f"f{i}.txt" for i in range(8)]
    assert name_paths(many, limit=3) == "f0.txt, f1.txt, f2.txt and 5 more"
