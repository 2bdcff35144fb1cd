"""The commands' consoles: whether output is a terminal is known without importing rich where rich would say no."""

from __future__ import annotations

import io
import sys

import pytest

from assay.cli.console import LazyConsole


def test_a_pipe_is_no_terminal_and_the_console_is_not_made_to_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    console = LazyConsole()
    assert console.is_terminal is False
    assert console._console is None
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich calls any stream a terminal then: its answer is used
    assert console.is_terminal is True
    assert console._console is not None
