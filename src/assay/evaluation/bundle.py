"""Directory trees as bytes: how a project and a candidate's tree travel to machines that have neither (through
Ray's object store, not a shared disk). A bundle is an uncompressed tar named by the SHA-256 of its bytes, so
a worker unpacks each tree once however many cases it runs on it."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

SKIPPED_NAMES = frozenset({".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})


class BundleTooLarge(ValueError):
    """The tree is over the size limit (a data directory or a build output left in the project?)."""


@dataclass(frozen=True)
class Bundle:
    """A packed tree: its tar bytes and their digest."""

    data: bytes
    digest: str


def pack(root: Path, *, exclude: Collection[Path] = (), max_bytes: int | None = None) -> Bundle:
    """Pack the files under ``root`` (symbolic links kept as links; ``.git``, caches and the ``exclude`` paths
    left out), in sorted order so the same tree gives the same digest. Raises BundleTooLarge past
    ``max_bytes`` of file content."""
    root = root.resolve()
    skip = {p.resolve() for p in exclude}
    buffer = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for directory, dirs, files in os.walk(root):
            here = Path(directory)
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_NAMES and here / d not in skip)
            for name in sorted(files):
                path = here / name
                if name in SKIPPED_NAMES or path in skip:
                    continue
                info = tar.gettarinfo(str(path), arcname=path.relative_to(root).as_posix())
                if not (info.isfile() or info.issym()):
                    continue
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                total += info.size
                if max_bytes is not None and total > max_bytes:
                    raise BundleTooLarge(f"{root} holds more than {max_bytes // 2**20} MB of files")
                if info.isfile():
                    with path.open("rb") as handle:
                        tar.addfile(info, handle)
                else:
                    tar.addfile(info)
            for name in dirs:
                info = tar.gettarinfo(str(here / name), arcname=(here / name).relative_to(root).as_posix())
                if info.isdir():
                    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                    tar.addfile(info)
    data = buffer.getvalue()
    return Bundle(data, hashlib.sha256(data).hexdigest())


def unpack(data: bytes, target: Path) -> Path:
    """Unpack a bundle into ``target`` (created), refusing members that would land outside it."""
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        tar.extractall(target, filter="data")
    return target
