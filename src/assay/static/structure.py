"""Structure checks: the editable paths exist inside the artifact, are non-empty text, and a skill has its
frontmatter."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from assay.safeload import load_yaml
from assay.static.report import Finding

GLOB_CHARS = re.compile(r"[*?\[]")
SKIPPED_DIRS = frozenset({".git", "__pycache__", ".assay", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
MAY_BE_EMPTY = frozenset({"__init__.py", "py.typed", ".gitkeep", ".keep"})
MAX_TEXT_BYTES = 5_000_000
BINARY_SNIFF = 8192
SKILL_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
SKILL_NAME_MAX = 64
SKILL_DESCRIPTION_MAX = 1024


@dataclass
class ArtifactFile:
    """One editable file: its path, its path relative to the artifact, and its text (None if unreadable)."""

    path: Path
    rel: str
    text: str | None = None


def _critical(rule: str, file: str, message: str, line: int | None = None) -> Finding:
    return Finding(severity="critical", rule=rule, file=file, line=line, message=message)


def _expand(path: Path) -> Iterable[Path]:
    if path.is_dir() and not path.is_symlink():
        for child in sorted(path.rglob("*")):
            if not SKIPPED_DIRS.intersection(child.relative_to(path).parts[:-1]) and not child.is_dir():
                yield child
    else:
        yield path


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # unreadable, or a symlink loop
        return False


def collect_files(root: Path, patterns: list[str]) -> tuple[list[ArtifactFile], list[Finding]]:
    """Resolve editable paths and globs (a directory means every file under it) inside ``root``.

    Critical findings: a pattern matching nothing, a path reaching outside the artifact (``..``, an
    absolute path, a symlink out).
    """
    files: dict[str, ArtifactFile] = {}
    findings: list[Finding] = []
    for pattern in patterns:
        pure = PurePosixPath(pattern)
        if pure.is_absolute() or ".." in pure.parts:
            findings.append(_critical("path-outside", pattern, "editable path must stay inside the artifact"))
            continue
        if GLOB_CHARS.search(pattern):
            matches = [
                m
                for m in sorted(root.glob(pattern))
                if not SKIPPED_DIRS.intersection(m.relative_to(root).parts)
            ]
        else:
            matches = [root / pattern] if (root / pattern).exists() else []
        found = False
        for match in matches:
            for path in _expand(match):
                rel = path.relative_to(root).as_posix()
                if not _inside(path, root):
                    findings.append(_critical("path-outside", rel, "symlink points outside the artifact"))
                    found = True
                elif path.is_file():
                    files.setdefault(rel, ArtifactFile(path, rel))
                    found = True
        if not found:
            findings.append(_critical("missing-path", pattern, "no existing file matches this editable path"))
    return list(files.values()), findings


def read_text_files(files: list[ArtifactFile]) -> list[Finding]:
    """Fill each file's ``text``; critical findings for empty, binary and unreadable files."""
    findings: list[Finding] = []
    for item in files:
        try:
            size = item.path.stat().st_size
            if size > MAX_TEXT_BYTES:
                findings.append(
                    Finding(
                        severity="warning",
                        rule="large-file",
                        file=item.rel,
                        message=f"{size} bytes: too large to check its content",
                    )
                )
                continue
            data = item.path.read_bytes()
        except OSError as exc:
            findings.append(_critical("unreadable", item.rel, f"cannot read: {exc.strerror or exc}"))
            continue
        if b"\x00" in data[:BINARY_SNIFF]:
            findings.append(
                _critical("binary-file", item.rel, "binary content (NUL bytes) in an editable file")
            )
            continue
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            findings.append(_critical("binary-file", item.rel, "not valid UTF-8 text", line))
            continue
        if not text.strip() and item.path.name not in MAY_BE_EMPTY:
            findings.append(_critical("empty-file", item.rel, "file is empty"))
        item.text = text
    return findings


def _skill_file(files: list[ArtifactFile]) -> ArtifactFile | None:
    markdown = [f for f in files if f.rel.lower().endswith(".md")]
    named = [f for f in markdown if PurePosixPath(f.rel).name.lower() == "skill.md"]
    candidates = named or markdown
    return candidates[0] if candidates else None


def check_skill(files: list[ArtifactFile]) -> list[Finding]:
    """A skill's SKILL.md (or its markdown file) opens with YAML frontmatter holding name and description."""
    skill = _skill_file(files)
    if skill is None:
        return [
            _critical("skill-frontmatter", "SKILL.md", "a skill needs a SKILL.md among its editable paths")
        ]
    if skill.text is None:
        return []  # already reported as binary, empty or unreadable
    lines = skill.text.splitlines()
    if not lines or lines[0].strip() != "---":
        return [
            _critical("skill-frontmatter", skill.rel, "no YAML frontmatter (--- name, description ---)", 1)
        ]
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), None)
    if end is None:
        return [_critical("skill-frontmatter", skill.rel, "frontmatter is not closed by a --- line", 1)]
    try:
        meta = load_yaml("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or "invalid YAML"
        # libyaml places an error at the end of the text on the line after it: keep it inside the frontmatter.
        line = min(mark.line, end - 2) + 2 if mark is not None else 1
        return [_critical("skill-frontmatter", skill.rel, f"frontmatter is not valid YAML: {problem}", line)]
    if not isinstance(meta, dict):
        return [_critical("skill-frontmatter", skill.rel, "frontmatter must be a mapping", 1)]
    findings = [
        _critical("skill-frontmatter", skill.rel, f"frontmatter needs a non-empty {key!r}", 1)
        for key in ("name", "description")
        if not isinstance(meta.get(key), str) or not meta[key].strip()
    ]
    name, description = meta.get("name"), meta.get("description")
    if (
        isinstance(name, str)
        and name.strip()
        and not (SKILL_NAME.fullmatch(name) and len(name) <= SKILL_NAME_MAX)
    ):
        message = f"name should be lowercase words joined by hyphens, at most {SKILL_NAME_MAX} characters"
        findings.append(
            Finding(severity="warning", rule="skill-name", file=skill.rel, line=1, message=message)
        )
    if isinstance(description, str) and len(description) > SKILL_DESCRIPTION_MAX:
        message = f"description is longer than {SKILL_DESCRIPTION_MAX} characters"
        findings.append(
            Finding(severity="warning", rule="skill-description", file=skill.rel, line=1, message=message)
        )
    return findings
