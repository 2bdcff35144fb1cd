"""Consoles for the commands: tables stay readable when output goes to a file or a pipe."""

from __future__ import annotations

import os
import sys

from rich.console import Console

PIPE_WIDTH = 160


def make_console(*, stderr: bool = False) -> Console:
    """A rich console; when not writing to a terminal, 160 columns (or $COLUMNS) instead of rich's 80, so table
    cells such as candidate ids are not folded across lines."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else int(os.environ.get("COLUMNS", PIPE_WIDTH))
    return Console(stderr=stderr, width=width)
