"""Deny by default: which entries of a candidate's work directory its jail masks, and naming one it needed.

The jail shows the work directory as a writable bind of the host directory, so files a candidate writes stay
there for ``file_exists`` checks. What was already there is shown only when it is declared (``shown``:
patterns relative to the work directory, as in ``artifact.paths``); every other entry is masked, at the
highest level possible (a directory that holds nothing shown gets one empty mount). Directories on the way to
a shown path stay, with their other entries masked one by one. Symbolic links are left alone: they resolve
inside the jail, to what it shows.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from assay.history.scope import matches_any

if TYPE_CHECKING:
    from assay.sandbox.jail import Jail

_GLOB = re.compile(r"[*?\[]")
# What a program prints when it could not open a path (Python, coreutils, shells).
_REFUSED = re.compile(
    r"No such file or directory|Permission denied|Read-only file system|Not a directory|can't open file"
)
_QUOTED = re.compile(r"'([^'\n]+)'|\"([^\"\n]+)\"")
_MODULE = re.compile(r"No module named '([\w.]+)'")
_WORD = re.compile(r"[^\s'\"`:,;()\[\]{}<>|&]+")


def literal(path: str) -> str:
    """``path`` as a pattern that matches only itself (glob characters in brackets)."""
    return _GLOB.sub(lambda m: f"[{m.group(0)}]", path)


def _bases(shown: Sequence[str]) -> list[tuple[tuple[str, ...], bool]]:
    """Each pattern's leading literal segments, and whether a glob follows them."""
    found = []
    for pattern in shown:
        parts = [p for p in pattern.strip().split("/") if p not in ("", ".")]
        if pattern.strip().startswith("/") or ".." in parts:
            continue
        cut = next((i for i, part in enumerate(parts) if _GLOB.search(part)), len(parts))
        found.append((tuple(parts[:cut]), cut < len(parts)))
    return found


def _may_hold(parts: tuple[str, ...], bases: list[tuple[tuple[str, ...], bool]]) -> bool:
    """Whether the directory at ``parts`` may hold a path some pattern shows."""
    return any(parts == base[: len(parts)] or (glob and parts[: len(base)] == base) for base, glob in bases)


def masked_entries(root: Path, shown: Sequence[str], hidden: Collection[Path] = ()) -> list[Path]:
    """The entries under ``root`` (absolute, real) to mask: neither shown nor on the way to a shown path.
    ``hidden`` paths are masked anyway: they are neither listed nor walked into."""
    bases = _bases(shown)

    def visit(directory: Path, rel: tuple[str, ...]) -> tuple[bool, list[Path]]:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return False, []
        holds, masked = False, []
        for entry in entries:
            path, parts = Path(entry.path), (*rel, entry.name)
            if path in hidden or entry.is_symlink():
                continue
            if matches_any("/".join(parts), shown):
                holds = True
                continue
            if entry.is_dir(follow_symlinks=False) and _may_hold(parts, bases):
                inner, below = visit(path, parts)
                if inner:
                    holds = True
                    masked += below
                    continue
            masked.append(path)
        return holds, masked

    return visit(root, ())[1]


def _in(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _hides(jail: Jail, path: Path) -> bool:
    """Whether ``jail`` keeps ``path`` out of sight: masked, or in a protected root and not mounted."""
    if _in(path, (*jail.hidden, *jail.scratch)):
        return True
    if _in(path, (*jail.writable, *jail.readable, *jail.read_only)):
        return False
    return _in(path, jail.protected)


def unshown_path(text: str, workdir: Path, jail: Jail) -> str | None:
    """The first path that ``text`` (a failed case's error and stderr) says could not be opened, that exists
    on the host and that ``jail`` does not show: as written, or None."""
    root = Path(os.path.realpath(workdir))
    for line in text.splitlines():
        words = []
        for module in _MODULE.findall(line):  # Python looked for the module's file in the work directory
            base = module.replace(".", "/")
            words += [f"{base}.py", base]
        if _REFUSED.search(line):
            words += [a or b for a, b in _QUOTED.findall(line)] + _WORD.findall(line)
        for word in words:
            path = Path(os.path.normpath(root / word))
            if _hides(jail, path) and os.path.lexists(path):
                return str(word)
    return None
