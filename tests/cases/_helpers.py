"""Shared helpers for the case-loading tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import ConfigError

DATA = Path(__file__).parent / "data"


def one_line(excinfo: pytest.ExceptionInfo[ConfigError], *parts: str) -> str:
    """Assert the error renders as one line containing every part; return the text."""
    text = str(excinfo.value)
    assert "\n" not in text, text
    for part in parts:
        assert part in text, f"{part!r} not in {text!r}"
    return text


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
