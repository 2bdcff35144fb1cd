"""Small filesystem helpers: atomic writes and safe file names."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old file or the new one, never a partial one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def safe_name(name: str, max_len: int = 80) -> str:
    """A file name for an arbitrary id: readable, and unique (a short hash is added when characters changed)."""
    cleaned = _UNSAFE.sub("_", name).strip("._") or "case"
    if cleaned != name or len(cleaned) > max_len:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
        cleaned = f"{cleaned[: max_len - 9]}-{digest}"
    return cleaned
