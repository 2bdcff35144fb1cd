"""The editable files assay.yaml names, checked before anything runs: each entry of ``artifact.paths`` names a
file that is there, and no case file is listed as editable and as read-only at once.

Without this, an editable path that does not exist reached the L1 static tier as a critical finding of the
artifact (``init``: "the L1 static tier found critical problems", ``evolve``: a generation and "search
exhausted"), and a case file in both ``paths`` and ``forbid`` was read-only without a word (forbid wins).
Both are mistakes in the configuration, named in one line with the field to fix.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

from assay.config import AssayConfig
from assay.errors import ConfigError
from assay.fsutil import relative_posix
from assay.history.scope import matches_any
from assay.static.structure import collect_files

MAX_LISTED = 5000  # files looked at for a suggestion: a large tree is not walked whole for a typo
GLOB = re.compile(r"[*?\[]")
SKIPPED = frozenset((".git", ".assay", "__pycache__", "node_modules", ".venv"))


def refuse_bad_artifact_paths(config: AssayConfig) -> None:
    """Raise a one-line ConfigError for an editable path that matches no file, and for a case file that
    ``artifact.paths`` and ``artifact.forbid`` both name."""
    root = config.artifact_dir
    paths, forbid = config.artifact.paths, config.artifact.forbid
    for index, pattern in enumerate(paths):
        _, findings = collect_files(root, [pattern])
        if any(f.rule == "missing-path" for f in findings):
            raise ConfigError(_missing(root, pattern), file=config.path, field=f"artifact.paths[{index}]")
    for name in config.cases.all_files:
        rel = relative_posix((config.base_dir / name).resolve(), root)
        if rel is None or not matches_any(rel, forbid):
            continue
        for index, pattern in enumerate(paths):
            if _names(pattern, rel):
                raise ConfigError(
                    f"{pattern!r} names the case file {name}, which artifact.forbid lists too: a case file is"
                    " never editable; take it out of artifact.paths",
                    file=config.path,
                    field=f"artifact.paths[{index}]",
                )


def _names(pattern: str, rel: str) -> bool:
    """Whether ``pattern`` names the file ``rel`` itself: a glob or a folder that covers it (``**/*`` with the
    case files forbidden) is how one says "everything but these", not a contradiction."""
    if GLOB.search(pattern):
        return False
    return "/".join(p for p in pattern.strip().split("/") if p not in ("", ".")) == rel


def _missing(root: Path, pattern: str) -> str:
    """``no file matches 'priorty.py' in /p (relative to artifact.root); did you mean 'priority.py'?``"""
    text = f"no file matches {pattern!r} in {root} (editable paths are relative to artifact.root)"
    close = difflib.get_close_matches(pattern, _files(root), n=1, cutoff=0.6)
    return f"{text}; did you mean {close[0]!r}?" if close else text


def _files(root: Path) -> list[str]:
    """Up to :data:`MAX_LISTED` files under ``root`` (root-relative, POSIX), run data and VCS folders left out."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED)
        rel = Path(dirpath).relative_to(root)
        found.extend((rel / name).as_posix() for name in sorted(filenames))
        if len(found) >= MAX_LISTED:
            break
    return found
