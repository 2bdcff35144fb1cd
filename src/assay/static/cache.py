"""The L1 scan's findings per file, kept by content: a file the scan saw before is not parsed or scanned again.

An entry is keyed by the file's text and relative path (detect-secrets' filters look at file names), the
artifact kind and whether security is scanned, and a fingerprint of the scanner itself (assay's static
modules and the detect-secrets release): a change to any of them is a miss. Entries are small JSON files
under ``<data dir>/cache/static``, written whole (a temporary file renamed), so processes may share the
folder; a missing, unreadable or malformed entry is a miss, and the folder can be deleted at any time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from functools import cache
from importlib import metadata
from pathlib import Path

from assay.static.report import Finding

FORMAT = 1


@cache
def scanner_fingerprint() -> str:
    """What the findings depend on besides the file: the static tier's source and detect-secrets' version."""
    digest = hashlib.sha256(f"{FORMAT}".encode())
    for module in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(module.name.encode() + b"\0" + module.read_bytes())
    with contextlib.suppress(metadata.PackageNotFoundError):
        digest.update(metadata.version("detect-secrets").encode())
    return digest.hexdigest()


class ScanCache:
    """Findings per file under ``directory``, created on first write."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def key(self, *, kind: str, security: bool, rel: str, text: str) -> str:
        """The entry of ``text`` at ``rel`` in an artifact of ``kind``."""
        digest = hashlib.sha256(f"{scanner_fingerprint()}\0{kind}\0{security}\0{rel}\0".encode())
        digest.update(text.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> list[Finding] | None:
        """The findings kept under ``key``, or None (a miss)."""
        try:
            raw = json.loads(self._path(key).read_bytes())
            return [Finding.model_validate(item) for item in raw]
        except (OSError, ValueError, TypeError):  # pydantic's ValidationError is a ValueError
            return None

    def put(self, key: str, findings: list[Finding]) -> None:
        """Keep ``findings`` under ``key``; a folder that cannot be written only costs the next scan."""
        path = self._path(key)
        data = json.dumps([f.model_dump() for f in findings]).encode()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".entry-")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(temporary, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError:
            pass
