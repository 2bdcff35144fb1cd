"""Consoles for the commands: tables stay readable when output goes to a file or a pipe, and text is never
read as markup (a case id, an output or an error message may hold ``[/x]``, which rich would reject)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

PIPE_WIDTH = 160


def make_console(*, stderr: bool = False) -> Console:
    """A rich console without markup (style with ``rich.text.Text``); when not writing to a terminal, 160
    columns (or $COLUMNS) instead of rich's 80, so table cells such as candidate ids are not folded."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else int(os.environ.get("COLUMNS", PIPE_WIDTH))
    return Console(stderr=stderr, width=width, markup=False)


class LazyConsole:
    """A :func:`make_console` console made on first use, so that importing a command module (which every
    ``assay`` invocation does, ``--version`` and ``--help`` included) does not import rich's console."""

    def __init__(self, *, stderr: bool = False) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    @property
    def real(self) -> Console:
        """The console itself (for rich objects that take one, such as a progress bar)."""
        if self._console is None:
            self._console = make_console(stderr=self._stderr)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)
