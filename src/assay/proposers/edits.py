"""Parse a proposer's answer (SEARCH/REPLACE blocks or whole files) and apply it to a worktree.

Applying is all or nothing: every edit is matched in memory first (exactly, then ignoring indentation and
trailing whitespace, re-indenting the replacement), and files are written only when all of them matched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from assay.errors import AssayError
from assay.fsutil import atomic_write_text

_DESCRIPTION = re.compile(r"^\**DESCRIPTION\**:\s*(.*)$", re.IGNORECASE)
_CITES = re.compile(r"^\**CITES?\**:\s*(.*)$", re.IGNORECASE)
_FILE = re.compile(r"^\**FILE\**:\s*(.+)$", re.IGNORECASE)
_SEARCH = re.compile(r"^<{5,9}\s*SEARCH\s*$")
_DIVIDER = re.compile(r"^={5,9}\s*$")
_REPLACE = re.compile(r"^>{5,9}\s*REPLACE\s*$")
_FENCE = re.compile(r"^(`{3,}|~{3,})[\w+.-]*\s*$")


class EditError(AssayError):
    """An answer that cannot be applied: no edit, an unmatched block, a path that is not editable."""


@dataclass(frozen=True)
class Edit:
    """One change to ``path``: replace ``search`` with ``replace``, or the whole file when ``search`` is None."""

    path: str
    search: str | None
    replace: str


@dataclass
class Answer:
    """A parsed answer: the one-line description, the cited trace paths and the edits, in order."""

    description: str = ""
    citations: list[str] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)


def _path_of(line: str) -> str:
    return line.strip().strip("`*#").strip().removesuffix(":").strip("`*").strip()


def _take_until(lines: list[str], start: int, end: re.Pattern[str]) -> tuple[list[str], int] | None:
    for i in range(start, len(lines)):
        if end.match(lines[i].strip()):
            return lines[start:i], i + 1
    return None


def parse_answer(text: str) -> Answer:
    """Read ``DESCRIPTION:``, ``CITES:``, SEARCH/REPLACE blocks (each after a path line) and ``FILE: path``
    fenced blocks. Raises EditError for an unterminated block or a block with no path before it."""
    answer = Answer()
    lines = text.splitlines()
    path: str | None = None
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        i += 1
        if (m := _DESCRIPTION.match(stripped)) and not answer.description:
            answer.description = m.group(1).strip()
        elif m := _CITES.match(stripped):
            cited = [c.strip("`'\" ") for c in re.split(r"[,\s]+", m.group(1))]
            answer.citations += [c for c in cited if c and c.lower() != "none"]
        elif m := _FILE.match(stripped):
            path = _path_of(m.group(1))
            j = i
            while j < len(lines) and not lines[j].strip():
                j += 1
            fence = _FENCE.match(lines[j].strip()) if j < len(lines) else None
            if fence:
                closing = re.compile(rf"^{re.escape(fence.group(1))}\s*$")
                body = _take_until(lines, j + 1, closing)
                if body is None:
                    raise EditError(f"unterminated fenced block for FILE: {path}")
                content = "\n".join(body[0])
                answer.edits.append(Edit(path, None, content + "\n" if content else ""))
                i = body[1]
        elif _SEARCH.match(stripped):
            if path is None:
                raise EditError("a SEARCH block has no file path line before it")
            search = _take_until(lines, i, _DIVIDER)
            replace = _take_until(lines, search[1], _REPLACE) if search else None
            if search is None or replace is None:
                raise EditError(f"unterminated SEARCH/REPLACE block for {path}")
            answer.edits.append(Edit(path, "\n".join(search[0]), "\n".join(replace[0])))
            i = replace[1]
        elif stripped and not _FENCE.match(stripped) and len(_path_of(stripped).split()) == 1:
            path = _path_of(stripped)
    return answer


def _glob_regex(pattern: str) -> re.Pattern[str]:
    pattern = pattern.strip().removeprefix("./")
    if pattern.endswith("/"):
        pattern += "**"
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        else:
            char = pattern[i]
            out += "[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char)
            i += 1
    return re.compile(out + r"\Z")


def is_editable(path: str, editable: Sequence[str]) -> bool:
    """Whether ``path`` (relative, normalised) is one of ``editable`` or matches one of its globs."""
    return any(_glob_regex(pattern).match(path) for pattern in editable)


def safe_path(worktree: Path, path: str) -> str:
    """``path`` normalised (relative, POSIX). Raises EditError for an absolute path, ``..``, or a path that
    leaves ``worktree`` through a symlink."""
    raw = path.strip().replace("\\", "/")
    if raw.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", raw):
        raise EditError(f"refused edit to absolute path {path!r}")
    parts = [p for p in PurePosixPath(raw).parts if p != "."]
    if not parts or ".." in parts:
        raise EditError(f"refused edit to path {path!r}: it leaves the worktree")
    clean = "/".join(parts)
    root = worktree.resolve()
    if not (root / clean).resolve().is_relative_to(root):
        raise EditError(f"refused edit to path {path!r}: it leaves the worktree")
    return clean


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _reindent(lines: list[str], old: str, new: str) -> list[str]:
    out = []
    for line in lines:
        if not line.strip():
            out.append("")
        elif line.startswith(old):
            out.append(new + line[len(old) :])
        else:
            width = max(0, len(new) + len(_indent(line)) - len(old))
            out.append((new[:1] or " ") * width + line.lstrip())
    return out


def _loose_replace(content: str, search: str, replace: str, newline: str) -> str | None:
    """Match ``search`` line by line ignoring indentation and trailing whitespace; re-indent ``replace``."""
    wanted = search.split("\n")
    while wanted and not wanted[0].strip():
        wanted.pop(0)
    while wanted and not wanted[-1].strip():
        wanted.pop()
    have = content.splitlines(keepends=True)
    norm = [line.strip() for line in have]
    target = [line.strip() for line in wanted]
    for at in range(len(have) - len(target) + 1):
        if norm[at : at + len(target)] == target:
            first = next(i for i, line in enumerate(wanted) if line.strip())
            lines = _reindent(replace.split("\n"), _indent(wanted[first]), _indent(have[at + first]))
            ends = have[at + len(target) - 1].endswith(("\n", "\r"))
            block = newline.join(lines) + (newline if ends else "")
            return "".join(have[:at]) + block + "".join(have[at + len(target) :])
    return None


def _apply_one(content: str | None, edit: Edit) -> str:
    if edit.search is None:
        return edit.replace
    text = content or ""
    if not edit.search.strip():
        sep = "" if not text or text.endswith("\n") else "\n"
        return text + sep + edit.replace + ("\n" if edit.replace and not edit.replace.endswith("\n") else "")
    if content is None:
        raise EditError(f"{edit.path}: SEARCH block for a file that does not exist")
    newline = "\r\n" if "\r\n" in text else "\n"
    search, replace = edit.search.replace("\n", newline), edit.replace.replace("\n", newline)
    at = text.find(search)
    if at != -1:
        end = at + len(search)
        if not replace and (at == 0 or text[at - 1] == "\n") and text.startswith(newline, end):
            end += len(newline)  # deleting whole lines deletes their line break too
        return text[:at] + replace + text[end:]
    loose = _loose_replace(text, edit.search, edit.replace, newline)
    if loose is None:
        first = next((line.strip() for line in edit.search.split("\n") if line.strip()), "")
        raise EditError(f"{edit.path}: SEARCH block does not match the file (it starts {first[:60]!r})")
    return loose


def apply_edits(worktree: Path, edits: Sequence[Edit], *, editable: Sequence[str]) -> list[str]:
    """Apply ``edits`` to files under ``worktree``, all or nothing; return the paths that changed.
    Raises EditError (one line) for no edit, a path that is not editable or unsafe, an unmatched block,
    a file that is not UTF-8 text, or edits that change nothing."""
    if not edits:
        raise EditError("the answer has no edit (no SEARCH/REPLACE block and no FILE block)")
    before: dict[str, str | None] = {}
    after: dict[str, str | None] = {}
    for edit in edits:
        path = safe_path(worktree, edit.path)
        if not is_editable(path, editable):
            raise EditError(f"refused edit to {path}: not an editable path ({', '.join(editable)})")
        if path not in after:
            file = worktree / path
            try:
                before[path] = file.read_bytes().decode("utf-8") if file.is_file() else None
            except UnicodeDecodeError:
                raise EditError(f"{path}: not a UTF-8 text file") from None
            after[path] = before[path]
        after[path] = _apply_one(after[path], Edit(path, edit.search, edit.replace))
    changed = [path for path in after if after[path] != before[path]]
    if not changed:
        raise EditError("the edits change nothing")
    for path in changed:
        file = worktree / path
        mode = file.stat().st_mode if before[path] is not None else None
        atomic_write_text(file, after[path] or "")
        if mode is not None:  # the atomic write creates a new file; keep an executable script executable
            file.chmod(mode)
    return changed
