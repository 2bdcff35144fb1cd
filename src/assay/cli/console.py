"""Consoles for the commands: tables stay readable when output goes to a file or a pipe, and text is never
read as markup (a case id, an output or an error message may hold ``[/x]``, which rich would reject)."""

from __future__ import annotations

import os
import sys

from rich.console import Console

PIPE_WIDTH = 160


def make_console(*, stderr: bool = False) -> Console:
    """A rich console without markup (style with ``rich.text.Text``); when not writing to a terminal, 160
    columns (or $COLUMNS) instead of rich's 80, so table cells such as candidate ids are not folded."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else int(os.environ.get("COLUMNS", PIPE_WIDTH))
    return Console(stderr=stderr, width=width, markup=False)
