"""Consoles for the commands: tables stay readable when output goes to a file or a pipe, and text is never
read as markup (a case id, an output or an error message may hold ``[/x]``, which rich would reject)."""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING, Any

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

    @property
    def is_terminal(self) -> bool:
        """rich's answer; a stream that is no tty, with none of the variables that make rich treat it as one,
        is answered without importing rich (its console costs tens of milliseconds to import)."""
        if self._console is None and not _forced():
            stream = sys.stderr if self._stderr else sys.stdout
            isatty = getattr(stream, "isatty", None)
            if isatty is not None and not isatty():
                return False
        return bool(self.real.is_terminal)

    @property
    def stream(self) -> IO[str]:
        """Where the console writes (its file once made, else the standard stream), without making it."""
        if self._console is not None:
            return self._console.file
        return sys.stderr if self._stderr else sys.stdout

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def _forced() -> bool:
    """Whether the environment may make rich call a stream a terminal when it is no tty."""
    return "TTY_COMPATIBLE" in os.environ or "FORCE_COLOR" in os.environ
