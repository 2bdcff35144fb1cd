"""Parsing answers and applying SEARCH/REPLACE and whole-file edits to real files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.proposers.edits import Edit, EditError, apply_edits, is_editable, parse_answer

ANSWER = """\
Here is my change.
DESCRIPTION: make the greeting warmer
CITES: /runs/x/traces/gen-001/c1.json, c2.json

**prompt.md**
```
<<<<<<< SEARCH
Be brief.
=======
Be brief and warm.
>>>>>>> REPLACE
```

<<<<<<< SEARCH
Sign off.
=======
>>>>>>> REPLACE

FILE: notes/extra.txt
````text
a file with a fence inside
```
not the end
```
````
"""


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    (tmp_path / "prompt.md").write_text("You are a bot.\nBe brief.\nSign off.\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "solve.py").write_text(
        "def solve(x):\n    if x > 1:\n        return x * 2   \n    return x\n"
    )
    return tmp_path


def test_parse_answer_reads_description_citations_and_blocks() -> None:
    answer = parse_answer(ANSWER)
    assert answer.description == "make the greeting warmer"
    assert answer.citations == ["/runs/x/traces/gen-001/c1.json", "c2.json"]
    assert answer.edits == [
        Edit("prompt.md", "Be brief.", "Be brief and warm."),
        Edit("prompt.md", "Sign off.", ""),
        Edit("notes/extra.txt", None, "a file with a fence inside\n```\nnot the end\n```\n"),
    ]


def test_parse_answer_errors_and_garbage() -> None:
    assert parse_answer("I think the prompt is fine as it is.").edits == []
    with pytest.raises(EditError, match=r"unterminated SEARCH/REPLACE block for a\.md"):
        parse_answer("a.md\n<<<<<<< SEARCH\nx\n=======\ny\n")
    with pytest.raises(EditError, match="no file path line"):
        parse_answer("<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n")
    with pytest.raises(EditError, match=r"unterminated fenced block for FILE: a\.md"):
        parse_answer("FILE: a.md\n```\nbody\n")


def test_apply_parsed_answer(worktree: Path) -> None:
    changed = apply_edits(worktree, parse_answer(ANSWER).edits, editable=["prompt.md", "notes/*.txt"])
    assert changed == ["prompt.md", "notes/extra.txt"]
    assert (worktree / "prompt.md").read_text() == "You are a bot.\nBe brief and warm.\n"
    assert (worktree / "notes" / "extra.txt").read_text().startswith("a file with a fence inside\n```\n")


def test_whitespace_tolerant_match_reindents_the_replacement(worktree: Path) -> None:
    edit = Edit(
        "src/solve.py",
        "if x > 1:\n    return x * 2\n",
        "if x > 2:\n    return x * 3\nelif x:\n    return 1",
    )
    assert apply_edits(worktree, [edit], editable=["src/**/*.py"]) == ["src/solve.py"]
    assert (worktree / "src" / "solve.py").read_text() == (
        "def solve(x):\n    if x > 2:\n        return x * 3\n    elif x:\n        return 1\n    return x\n"
    )


def test_tolerant_match_keeps_crlf_line_endings(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one\r\n  two  \r\nthree\r\n")
    apply_edits(tmp_path, [Edit("a.txt", "two\nthree", "2\n3")], editable=["a.txt"])
    assert (tmp_path / "a.txt").read_bytes() == b"one\r\n  2\r\n  3\r\n"
    apply_edits(tmp_path, [Edit("a.txt", "one\n  2", "uno\n  2")], editable=["a.txt"])
    assert (tmp_path / "a.txt").read_bytes() == b"uno\r\n  2\r\n  3\r\n"


def test_unmatched_block_changes_nothing(worktree: Path) -> None:
    edits = [Edit("prompt.md", "Be brief.", "Be long."), Edit("prompt.md", "Not in the file", "x")]
    with pytest.raises(
        EditError, match=r"prompt\.md: SEARCH block does not match the file \(it starts 'Not in"
    ):
        apply_edits(worktree, edits, editable=["prompt.md"])
    assert (worktree / "prompt.md").read_text() == "You are a bot.\nBe brief.\nSign off.\n"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../outside.md", "leaves the worktree"),
        ("notes/../../outside.md", "leaves the worktree"),
        ("/etc/passwd", "absolute path"),
        ("~/x.md", "absolute path"),
        ("C:/x.md", "absolute path"),
        ("assay.yaml", "not an editable path"),
        ("src/solve.txt", "not an editable path"),
    ],
)
def test_refused_paths(worktree: Path, path: str, message: str) -> None:
    with pytest.raises(EditError, match=message):
        apply_edits(worktree, [Edit(path, None, "pwned\n")], editable=["prompt.md", "src/**/*.py", "../*"])
    assert not (worktree.parent / "outside.md").exists()


def test_symlink_out_of_the_worktree_is_refused(
    worktree: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (worktree / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(EditError, match="leaves the worktree"):
        apply_edits(worktree, [Edit("link/x.md", None, "pwned\n")], editable=["**"])
    assert list(outside.iterdir()) == []


def test_whole_file_append_create_and_no_change(worktree: Path) -> None:
    script = worktree / "run.sh"
    script.write_text("#!/bin/sh\necho 1\n")
    script.chmod(0o755)
    apply_edits(worktree, [Edit("./run.sh", None, "#!/bin/sh\necho 2\n")], editable=["run.sh"])
    assert script.read_text() == "#!/bin/sh\necho 2\n" and os.access(script, os.X_OK)
    apply_edits(worktree, [Edit("prompt.md", "", "P.S. thanks")], editable=["prompt.md"])
    assert (worktree / "prompt.md").read_text().endswith("Sign off.\nP.S. thanks\n")
    apply_edits(worktree, [Edit("docs/new.md", "", "# New")], editable=["docs/"])
    assert (worktree / "docs" / "new.md").read_text() == "# New\n"
    with pytest.raises(EditError, match="does not exist"):
        apply_edits(worktree, [Edit("docs/missing.md", "x", "y")], editable=["docs/"])
    with pytest.raises(EditError, match="change nothing"):
        apply_edits(worktree, [Edit("prompt.md", "Be brief.", "Be brief.")], editable=["prompt.md"])
    with pytest.raises(EditError, match="no edit"):
        apply_edits(worktree, [], editable=["prompt.md"])


def test_binary_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(EditError, match="not a UTF-8 text file"):
        apply_edits(tmp_path, [Edit("blob.bin", "x", "y")], editable=["*.bin"])


def test_is_editable_globs() -> None:
    assert is_editable("prompt.md", ["prompt.md"])
    assert is_editable("src/a/b.py", ["src/**/*.py"]) and is_editable("src/b.py", ["src/**/*.py"])
    assert not is_editable("src/b.pyc", ["src/**/*.py"]) and not is_editable("b.py", ["src/*.py"])
    assert is_editable("a.md", ["./*.md"]) and not is_editable("d/a.md", ["*.md"])
    assert is_editable("skill/x/y.md", ["skill/"])
