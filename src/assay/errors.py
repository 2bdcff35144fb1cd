"""User-facing errors: each renders as one line naming the file, the field and what was expected."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class AssayError(Exception):
    """Base class of errors that the CLI prints as one line (no traceback)."""


class ConfigError(AssayError):
    """A configuration or case file is wrong.

    ``where`` is the file, ``field`` a dotted/indexed path inside it (``runner.timeout``,
    ``tests[3].assert[0].type``), ``message`` says what is wrong and what is expected.
    """

    def __init__(self, message: str, *, file: str | Path | None = None, field: str | None = None) -> None:
        self.file = str(file) if file is not None else None
        self.field = field
        self.message = message
        super().__init__(self.render())

    def render(self) -> str:
        location = self.file or ""
        if self.field:
            location = f"{location}: {self.field}" if location else self.field
        return f"{location}: {self.message}" if location else self.message


class UnreadableFile(ConfigError):
    """A file cannot be read as text: missing, a directory or device, too large, not UTF-8."""


def field_path(parts: Sequence[object]) -> str:
    """Render a location such as ``("tests", 3, "assert", 0, "type")`` as ``tests[3].assert[0].type``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out
