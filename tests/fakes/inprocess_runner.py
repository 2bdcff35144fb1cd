"""An in-process stand-in for the ``command`` runner, for tests of the loop's decisions (not of the sandbox).

``python SCRIPT ARGS...`` commands run here with :func:`runpy.run_path`, as ``__main__``, the workdir first on
``sys.path`` and what it prints as the output: no process, no jail, no interpreter start per case. Modules the
script imports from the workdir (a candidate's ``priority.py``) are forgotten after each case, so every
candidate's own files are what runs. The output's ``duration_s`` is 0, so the ratchet's time rule, which would
judge this process's scheduling noise, does not apply (a real run's time rule is tested with real processes).

Use it through the ``inprocess_runner`` fixture (tests/loop/conftest.py), which puts it in place of the command
runner for one test.
"""

from __future__ import annotations

import contextlib
import io
import runpy
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.model import Case, Output
from assay.runners.base import RunContext, Runner
from assay.runners.command import CommandTemplate

PYTHONS = {"python", "python3", Path(sys.executable).name}


class InProcessRunner(Runner):
    """Runs ``python SCRIPT ARGS...`` (the command template, rendered per case) in this process."""

    name = "command"

    def __init__(self, config: Any, context: RunContext) -> None:
        super().__init__(config, context)
        self.template = CommandTemplate(config.command)
        self.cases_run = 0

    async def run(self, case: Case, workdir: Path) -> Output:
        argv = shlex.split(self.template.render(case))
        if len(argv) < 2 or Path(argv[0]).name not in PYTHONS:
            raise ValueError(f"the in-process runner runs `python SCRIPT ...` commands only, not {argv!r}")
        self.cases_run += 1
        stdout, stderr = io.StringIO(), io.StringIO()
        error = None
        code = 0
        with (
            _as_main(workdir, argv[1:]),
            contextlib.redirect_stdout(stdout),
            contextlib.redirect_stderr(stderr),
        ):
            try:
                runpy.run_path(str(workdir / argv[1]), run_name="__main__")
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except Exception as exc:  # the script's failure is the case's, as a crashed process's would be
                error, code = f"{type(exc).__name__}: {exc}", 1
        if error is None and code:
            error = f"exit code {code}"
        text = stdout.getvalue()
        return Output(
            text=text.rstrip("\n"),
            stdout_tail=text[-2000:],
            stderr_tail=stderr.getvalue()[-2000:],
            exit_code=code,
            error=error,
            workdir=str(workdir),
        )


@contextlib.contextmanager
def _as_main(workdir: Path, argv: list[str]) -> Iterator[None]:
    """``sys.argv`` and ``sys.path`` as for ``python SCRIPT ARGS`` in ``workdir``; the modules it imported from
    there are dropped afterwards."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    before = set(sys.modules)
    sys.argv = [str(workdir / argv[0]), *argv[1:]]
    sys.path.insert(0, str(workdir))
    try:
        yield
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        root = str(workdir)
        for name in set(sys.modules) - before:
            if (getattr(sys.modules[name], "__file__", None) or "").startswith(root):
                del sys.modules[name]
