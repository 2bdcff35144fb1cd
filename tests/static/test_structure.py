"""Structure checks on real files: paths, empty and binary files, skill frontmatter."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.static import Finding, scan_artifact


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def rules(findings: list[Finding]) -> set[tuple[str, str, str]]:
    return {(f.severity, f.rule, f.file) for f in findings}


def test_missing_paths_and_globs(tmp_path: Path) -> None:
    write(tmp_path, "prompt.md", "Be brief.")
    report = scan_artifact(tmp_path, ["prompt.md", "absent.md", "docs/*.md"], "prompt")
    assert rules(report.findings) == {
        ("critical", "missing-path", "absent.md"),
        ("critical", "missing-path", "docs/*.md"),
    }
    assert report.files == ["prompt.md"]
    assert not report.passed


def test_globs_and_directories_expand(tmp_path: Path) -> None:
    write(tmp_path, "pkg/a.py", "A = 1\n")
    write(tmp_path, "pkg/sub/b.py", "B = 2\n")
    write(tmp_path, "pkg/__pycache__/a.cpython-311.pyc", b"\x00\x01binary")
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "tools/c.py", "C = 3\n")
    report = scan_artifact(tmp_path, ["pkg", "tools/*.py", "**/b.py"], "code")
    assert report.findings == []
    assert sorted(report.files) == ["pkg/__init__.py", "pkg/a.py", "pkg/sub/b.py", "tools/c.py"]


def test_paths_outside_the_artifact(tmp_path: Path) -> None:
    root = tmp_path / "artifact"
    write(root, "ok.md", "fine")
    write(tmp_path, "outside.md", "secret plans")
    (root / "link.md").symlink_to(tmp_path / "outside.md")
    report = scan_artifact(root, ["ok.md", "../outside.md", "/etc/passwd", "link.md"], "document")
    assert {(f.rule, f.file) for f in report.findings} == {
        ("path-outside", "../outside.md"),
        ("path-outside", "/etc/passwd"),
        ("path-outside", "link.md"),
    }
    assert "link.md" not in report.files


@pytest.mark.parametrize("content", ["", "   \n\t\n"])
def test_empty_file_is_critical(tmp_path: Path, content: str) -> None:
    write(tmp_path, "prompt.txt", content)
    report = scan_artifact(tmp_path, ["prompt.txt"], "prompt")
    assert rules(report.findings) == {("critical", "empty-file", "prompt.txt")}


def test_empty_package_marker_is_fine(tmp_path: Path) -> None:
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/mod.py", "X = 1\n")
    assert scan_artifact(tmp_path, ["pkg"], "code").findings == []


def test_binary_file_is_critical(tmp_path: Path) -> None:
    write(tmp_path, "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    write(tmp_path, "latin1.txt", "line one\ncaf\xe9\n".encode("latin-1"))
    report = scan_artifact(tmp_path, ["logo.png", "latin1.txt"], "document")
    found = {(f.rule, f.file, f.line) for f in report.findings}
    assert found == {("binary-file", "logo.png", None), ("binary-file", "latin1.txt", 2)}
    assert all(f.severity == "critical" for f in report.findings)


def test_prompt_and_document_text_pass(tmp_path: Path) -> None:
    write(tmp_path, "system.md", "You are a careful assistant.\n")
    write(tmp_path, "guide.txt", "Chapter one.\n")
    assert scan_artifact(tmp_path, ["system.md"], "prompt").passed
    assert scan_artifact(tmp_path, ["guide.txt"], "document").findings == []


GOOD_SKILL = "---\nname: pdf-tools\ndescription: Fill and merge PDF forms.\n---\n\n# PDF tools\nSteps...\n"


def test_good_skill(tmp_path: Path) -> None:
    write(tmp_path, "SKILL.md", GOOD_SKILL)
    write(tmp_path, "scripts/fill.py", "print('ok')\n")
    report = scan_artifact(tmp_path, ["SKILL.md", "scripts/*.py"], "skill")
    assert report.findings == []


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("# PDF tools\nNo frontmatter here.\n", 1, "no YAML frontmatter"),
        ("---\nname: pdf-tools\ndescription: x\n", 1, "not closed"),
        ("---\nname: pdf-tools\ndescription: [unclosed\n---\nbody\n", 3, "not valid YAML"),
        ("---\n- a\n- b\n---\nbody\n", 1, "must be a mapping"),
        ("---\nname: pdf-tools\n---\nbody\n", 1, "non-empty 'description'"),
        ("---\nname: ''\ndescription: Fill forms.\n---\nbody\n", 1, "non-empty 'name'"),
    ],
)
def test_bad_skill_frontmatter(tmp_path: Path, text: str, line: int, message: str) -> None:
    write(tmp_path, "SKILL.md", text)
    report = scan_artifact(tmp_path, ["SKILL.md"], "skill")
    [finding] = report.findings
    assert (finding.severity, finding.rule, finding.file, finding.line) == (
        "critical",
        "skill-frontmatter",
        "SKILL.md",
        line,
    )
    assert message in finding.message


def test_skill_markdown_not_named_skill_md(tmp_path: Path) -> None:
    write(tmp_path, "skills/pdf.md", "# PDF tools\n")
    report = scan_artifact(tmp_path, ["skills/pdf.md"], "skill")
    assert rules(report.findings) == {("critical", "skill-frontmatter", "skills/pdf.md")}


def test_skill_without_markdown(tmp_path: Path) -> None:
    write(tmp_path, "run.py", "print(1)\n")
    report = scan_artifact(tmp_path, ["run.py"], "skill")
    assert rules(report.findings) == {("critical", "skill-frontmatter", "SKILL.md")}


def test_skill_name_format_is_a_warning(tmp_path: Path) -> None:
    write(tmp_path, "SKILL.md", GOOD_SKILL.replace("pdf-tools", "PDF Tools"))
    report = scan_artifact(tmp_path, ["SKILL.md"], "skill")
    assert rules(report.findings) == {("warning", "skill-name", "SKILL.md")}
    assert report.passed
