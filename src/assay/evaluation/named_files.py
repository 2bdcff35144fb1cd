"""The files a check or a runner names: every word of a check's value, options and text (and of the runner's
command or function) that names a file or directory — ``file://x``, ``x.py:fn``, ``pkg.mod:fn``, and any other
word with a ``/`` or an extension that names an existing path. The candidates' jail hides what checks name
(:mod:`assay.evaluation.confine`); the answer key is made of it (:mod:`assay.evaluation.answer_key`)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from assay.config import AssayConfig, PythonRunnerConfig
from assay.model import CheckSpec

_TOKEN = re.compile(r"[^\s'\"`=,;()\[\]{}<>|&]+")
_FILE_URL = re.compile(r"file://([^\s'\"`,;()\[\]{}<>|&]+)")
_FUNCTION_SUFFIX = re.compile(r"(.+\.\w{1,8}):[A-Za-z_]\w*")
_MODULE_REF = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):[A-Za-z_]\w*")
_PATHISH = re.compile(r".*/.*|.+\.\w{1,8}")
_CD = re.compile(r"(?:^|[;&|(]\s*)(?:cd|pushd)\s+['\"]?([^\s'\";&|()]+)")


def repo_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding ``.git``."""
    for path in (start, *start.parents):
        if (path / ".git").exists():
            return path
    return None


def strings_in(value: Any) -> list[str]:
    """Every string inside a JSON-like value: leaves, and the keys of mappings."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*strings_in(k), *strings_in(v))]
    if isinstance(value, list | tuple | set):
        return [s for v in value for s in strings_in(v)]
    return []


def _candidates(token: str) -> list[str]:
    """The relative or absolute paths a word of a check may name."""
    word = token.removeprefix("file://")
    found = []
    module = _MODULE_REF.fullmatch(word)
    if module:
        base = module.group(1).replace(".", "/")
        found += [f"{base}.py", f"{base}/__init__.py"]
    suffix = _FUNCTION_SUFFIX.fullmatch(word)
    if suffix:
        word = suffix.group(1)
    # A word of slashes and dots alone names no file: `output.length / 100` must not hide the root.
    if (token.startswith("file://") or suffix or _PATHISH.fullmatch(word)) and word.strip("/."):
        found.append(word)
    return found


def check_files(specs: Iterable[CheckSpec], dirs: Sequence[Path]) -> set[Path]:
    """The existing files and directories the checks name (see the module docstring), resolved against
    ``dirs`` in turn, and in a command that changes directory (``cd checks && python grade.py``) against that
    directory first."""
    found: set[Path] = set()
    seen: set[str] = set()  # thousands of cases repeat the same strings (a regex, a word): look once
    for spec in specs:
        for text in [*strings_in(spec.value), *strings_in(spec.options), *strings_in(spec.text)]:
            if text in seen:
                continue
            seen.add(text)
            moved = [
                Path(os.path.normpath(d / m)) for m in _CD.findall(text) for d in dirs if (d / m).is_dir()
            ]
            for token in _TOKEN.findall(text):
                for name in _candidates(token):
                    path = Path(name).expanduser()
                    for where in [Path("/")] if path.is_absolute() else [*moved, *dirs]:
                        full = Path(os.path.normpath(where / path))
                        if full.exists():
                            found.add(full)
                            break
    return found


def named_by_case_files(files: Iterable[Path]) -> set[Path]:
    """The files a case file names with ``file://`` (prompts, vars, assertions), resolved against it."""
    found: set[Path] = set()
    for file in files:
        try:
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for match in _FILE_URL.finditer(text):
            name = _FUNCTION_SUFFIX.fullmatch(match.group(1))
            path = Path(os.path.normpath(file.parent / (name.group(1) if name else match.group(1))))
            if path.exists():
                found.add(path)
    return found


def runner_files(config: AssayConfig) -> set[Path]:
    """The paths the runner's own command or function names, resolved against the artifact root (whether they
    exist or not)."""
    runner = config.runner
    text = getattr(runner, "command", "") or ""
    if isinstance(runner, PythonRunnerConfig):
        text += " " + runner.function
    words: set[Path] = set()
    for token in _TOKEN.findall(text):
        for name in _candidates(token):
            words.add(Path(os.path.normpath(config.artifact_dir / name)))
    if isinstance(runner, PythonRunnerConfig):
        packages = runner.function.partition(":")[0].split(".")[:-1]
        for depth in range(1, len(packages) + 1):
            words.add(config.artifact_dir.joinpath(*packages[:depth], "__init__.py"))
    return words
