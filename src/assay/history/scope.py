"""The editable scope of an artifact: which changed paths a candidate may touch, which files it consists of.

Patterns (``artifact.paths`` / ``artifact.forbid``) are relative to the **artifact root**. ``*`` and ``?``
match within one path segment, ``[...]`` is a character class, ``**`` as a whole segment matches any
number of segments (``src/**/*.py``, ``**/*.md``). A pattern matches a path when it matches the path or
one of its leading directories, so ``prompts``, ``prompts/`` and ``prompts/**`` all mean everything under
``prompts``; ``.`` means the whole artifact. Patterns or paths that are absolute or contain ``..`` never
match. A forbidden match always wins over an editable one.

Git reports paths relative to the repository's top level; when the artifact root is a subdirectory of the
repository, pass its repository-relative path as ``artifact_prefix`` (``""`` when they are the same).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

_GLOB_CHARS = re.compile(r"[*?\[]")


def _translate_segment(segment: str) -> str:
    out, i = [], 0
    while i < len(segment):
        char = segment[i]
        i += 1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := _class_end(segment, i)) > 0:
            body = segment[i:end]
            negate = body[:1] in ("!", "^")
            body = (body[1:] if negate else body).replace("\\", "\\\\").replace("[", "\\[")
            out.append(f"[^/{body}]" if negate else f"[{body}]")
            i = end + 1
        else:
            out.append(re.escape(char))
    return "".join(out)


def _class_end(segment: str, start: int) -> int:
    """Index of the ``]`` closing a character class opened just before ``start``; -1 if unclosed."""
    j = start + 1 if segment[start : start + 1] in ("!", "^") else start
    j = j + 1 if segment[j : j + 1] == "]" else j
    return segment.find("]", j)


def _segments(pattern: str) -> list[str] | None:
    """The normalised segments of a pattern or path; None when it is empty, absolute or uses ``..``."""
    text = pattern.strip()
    if not text or text.startswith("/"):
        return None
    parts = text.split("/")
    if ".." in parts:
        return None
    return [p for p in parts if p not in ("", ".")]


@lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str] | None:
    segments = _segments(pattern)
    if segments is None:
        return None
    if not segments:
        return re.compile(".*", re.S)
    out = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
        else:
            out.append(_translate_segment(segment) + ("" if last else "/"))
    return re.compile("".join(out), re.S)


def matches_any(path: str, patterns: Iterable[str]) -> bool:
    """Whether the artifact-relative ``path`` (or one of its leading directories) matches a pattern."""
    segments = _segments(path)
    if not segments:
        return False
    prefixes = ["/".join(segments[: n + 1]) for n in range(len(segments))]
    for pattern in patterns:
        regex = _compile(pattern)
        if regex is not None and any(regex.fullmatch(p) for p in prefixes):
            return True
    return False


def _artifact_relative(path: str, prefix: str) -> str | None:
    if not prefix:
        return path
    return path[len(prefix) + 1 :] if path.startswith(prefix + "/") else None


def out_of_scope(
    changed: list[str], editable: Sequence[str], forbid: Sequence[str], *, artifact_prefix: str = ""
) -> list[str]:
    """The ``changed`` paths (repository-relative, as git reports them) a candidate was not allowed to
    touch: outside the artifact root, matching no ``editable`` pattern, or matching a ``forbid`` one."""
    prefix = "/".join(_segments(artifact_prefix) or [])
    violations = []
    for path in changed:
        rel = _artifact_relative(path, prefix)
        if rel is None or matches_any(rel, forbid) or not matches_any(rel, editable):
            violations.append(path)
    return violations


def _static_base(pattern: str) -> str | None:
    segments = _segments(pattern)
    if segments is None:
        return None
    base = []
    for segment in segments:
        if _GLOB_CHARS.search(segment):
            break
        base.append(segment)
    return "/".join(base)


def artifact_files(root: Path, editable: Sequence[str], *, forbid: Sequence[str] = ()) -> list[str]:
    """The existing files under the artifact ``root`` that ``editable`` selects and ``forbid`` does not,
    as sorted root-relative POSIX paths. ``.git`` directories are skipped and symlinked directories are
    not followed; the run data directory is not special, so forbid it when a pattern would cover it."""
    root = Path(root)
    candidates: set[str] = set()
    for base in {b for b in map(_static_base, editable) if b is not None}:
        start = root / base if base else root
        if start.is_file():
            candidates.add(base)
            continue
        for dirpath, dirnames, filenames in os.walk(start):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            rel_dir = Path(dirpath).relative_to(root).as_posix()
            for name in filenames:
                if os.path.exists(os.path.join(dirpath, name)):
                    candidates.add(name if rel_dir == "." else f"{rel_dir}/{name}")
    return sorted(p for p in candidates if matches_any(p, editable) and not matches_any(p, forbid))
