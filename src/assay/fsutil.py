"""Small filesystem helpers: atomic writes and safe file names."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old file or the new one, never a partial one."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path | str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file + rename), with plain system calls: this runs once per
    trace, thousands of times per evaluation, where mkstemp and text wrappers cost more than the write."""
    target = os.fspath(path)
    tmp = f"{target}.{os.getpid()}.{threading.get_ident()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(tmp, flags, 0o644)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        fd = os.open(tmp, flags, 0o644)
    try:
        with memoryview(data) as view:
            written = 0
            while written < len(view):
                written += os.write(fd, view[written:])
        os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def safe_name(name: str, max_len: int = 80) -> str:
    """A file name for an arbitrary id: readable, and unique (a short hash is added when characters changed)."""
    cleaned = _UNSAFE.sub("_", name).strip("._") or "case"
    if cleaned != name or len(cleaned) > max_len:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
        cleaned = f"{cleaned[: max_len - 9]}-{digest}"
    return cleaned
