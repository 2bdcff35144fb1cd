"""Hard links to answer-key files inside a folder someone may read (a ``home_ro`` or ``runner.read_only`` entry).

A hard link is the same file under another name, so nothing in its name or target gives it away: it is found
by its (device, inode). Hard links never cross filesystems, so only the folders on a key file's device are
walked, and the walk stops at mount points. Each directory's entries are remembered with its modification
time (which changes when an entry is added, removed or renamed in it), so walking the same folder again in a
process reads only the directories that changed; a first walk of 100,000 files takes about 0.05 s.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

Identity = tuple[int, int]
K = TypeVar("K")
# A directory's path -> (its st_mtime_ns, its device, its entries: (path, inode, is a directory)).
_ENTRIES: dict[str, tuple[int, int, list[tuple[str, int, bool]]]] = {}


def _entries(directory: str, info: os.stat_result) -> list[tuple[str, int, bool]]:
    known = _ENTRIES.get(directory)
    if known is not None and known[0] == info.st_mtime_ns and known[1] == info.st_dev:
        return known[2]
    found: list[tuple[str, int, bool]] = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    found.append((entry.path, entry.inode(), entry.is_dir(follow_symlinks=False)))
                except OSError:
                    continue
    except OSError:
        return []
    _ENTRIES[directory] = (info.st_mtime_ns, info.st_dev, found)
    return found


def links_under(
    root: Path, keys: Mapping[Identity, K], *, skip: Iterable[Path] = ()
) -> Iterator[tuple[Path, K]]:
    """``(path, key)`` for each file under ``root`` (``root`` itself included) that is the same file as one
    of ``keys`` ((device, inode) -> the key): a hard link, or the key itself. Directories in ``skip`` are
    not entered; symbolic links are not followed (what one shows is checked where it points)."""
    try:
        top = os.stat(root, follow_symlinks=False)
    except OSError:
        return
    devices = {device for device, _ in keys}
    if (top.st_dev, top.st_ino) in keys:
        yield root, keys[(top.st_dev, top.st_ino)]
        return
    if top.st_dev not in devices or not os.path.isdir(root) or os.path.islink(root):
        return
    skipped = {os.path.normpath(p) for p in skip}
    inodes = {inode for device, inode in keys if device == top.st_dev}
    stack = [(str(root), top)]
    while stack:
        directory, info = stack.pop()
        for path, inode, is_dir in _entries(directory, info):
            if is_dir:
                if path in skipped:
                    continue
                try:
                    below = os.stat(path, follow_symlinks=False)
                except OSError:
                    continue
                if below.st_dev == top.st_dev:  # a mount point starts another filesystem
                    stack.append((path, below))
            elif inode in inodes:
                try:
                    full = os.stat(path, follow_symlinks=False)
                except OSError:
                    continue
                key = keys.get((full.st_dev, full.st_ino))
                if key is not None:
                    yield Path(path), key
