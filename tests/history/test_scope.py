"""Editable scope: glob matching, forbid winning, `..` never matching, artifact files on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.history import artifact_files, matches_any, out_of_scope


@pytest.mark.parametrize(
    ("path", "pattern", "expected"),
    [
        ("prompt.md", "prompt.md", True),
        ("prompts/a/b.md", "prompts", True),
        ("prompts/a/b.md", "prompts/", True),
        ("prompts/a/b.md", "./prompts/**", True),
        ("prompts-old/a.md", "prompts", False),
        ("src/pkg/deep/m.py", "src/**/*.py", True),
        ("src/m.py", "src/**/*.py", True),
        ("src/m.pyc", "src/**/*.py", False),
        ("lib/m.py", "src/**/*.py", False),
        ("docs/x/README.md", "**/*.md", True),
        ("a.md", "*.md", True),
        ("sub/a.md", "*.md", False),
        ("skills/a/SKILL.md", "skills/*", True),
        ("v1.txt", "v?.txt", True),
        ("v10.txt", "v?.txt", False),
        ("case_b.yaml", "case_[ab].yaml", True),
        ("case_c.yaml", "case_[!ab].yaml", True),
        ("case_a.yaml", "case_[!ab].yaml", False),
        ("weird[1].txt", "weird[1].txt", False),
        ("anything/at/all.txt", ".", True),
        ("../outside.txt", "**", False),
        ("a/../../outside.txt", ".", False),
        ("outside.txt", "../outside.txt", False),
        ("etc/passwd", "/etc/passwd", False),
        ("file.txt", "", False),
    ],
)
def test_matches_any(path: str, pattern: str, expected: bool) -> None:
    assert matches_any(path, [pattern]) is expected


def test_out_of_scope_lists_edits_outside_editable_and_forbid_always_wins() -> None:
    changed = [
        "prompt.md",
        "src/m.py",
        "src/secret.py",
        "cases/dev.yaml",
        "assay.yaml",
        "../x",
        "src/sub/t.py",
    ]
    editable = ["prompt.md", "src/", "cases"]
    forbid = ["cases/**", "src/secret.py", "assay.yaml"]
    assert out_of_scope(changed, editable, forbid) == [
        "src/secret.py",
        "cases/dev.yaml",
        "assay.yaml",
        "../x",
    ]
    assert out_of_scope(["src/m.py"], ["src"], ["src"]) == ["src/m.py"]
    assert out_of_scope(["prompt.md"], [], []) == ["prompt.md"]


def test_out_of_scope_with_an_artifact_in_a_subdirectory_of_the_repository() -> None:
    changed = ["tools/agent/prompt.md", "tools/agent/evals/cases.yaml", "tools/other/x.md", "README.md"]
    assert out_of_scope(changed, ["*.md"], ["evals"], artifact_prefix="tools/agent/") == [
        "tools/agent/evals/cases.yaml",
        "tools/other/x.md",
        "README.md",
    ]
    assert out_of_scope(["tools/agentx/p.md"], ["."], [], artifact_prefix="./tools/agent") == [
        "tools/agentx/p.md"
    ]


def test_artifact_files_selects_existing_files_sorted_without_git_or_forbidden(tmp_path: Path) -> None:
    for name in ["prompt.md", "src/a.py", "src/pkg/b.py", "src/pkg/data.json", "cases/c.yaml", ".git/HEAD"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    (tmp_path / "src" / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    assert artifact_files(tmp_path, ["src/**/*.py", "prompt.md", "missing.md"]) == [
        "prompt.md",
        "src/a.py",
        "src/pkg/b.py",
    ]
    assert artifact_files(tmp_path, ["."], forbid=["cases", "src/pkg/*.json"]) == [
        "prompt.md",
        "src/a.py",
        "src/pkg/b.py",
    ]
    assert artifact_files(tmp_path, ["../", "src/../cases/c.yaml"]) == []
