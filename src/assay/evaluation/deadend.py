"""A dead end: every case failed the same way before the artifact ran, so no edit of the artifact can help.

The runner's command names a file that is not there (``python3 clasify.py``), its program is not installed,
or it cannot start: each case ends with an error of the harness — exit code 126 or 127, "command not found",
"can't open file", "No such file or directory" naming a path that is not an editable file, or the jail's
"does not show" line — and no case passes. An artifact that crashes on every case is a different thing: its
traceback runs through an editable file, and evolving it is a legitimate job.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from assay.evaluation.evaluator import EvalResult
from assay.model import CaseResult

_HARNESS = re.compile(
    r"command not found|can't open file|No such file or directory|cannot (?:start|run|execute)|"
    r"the jail does not show|No module named",
    re.IGNORECASE,
)
_FRAME = re.compile(r'File "([^"]+)", line \d+')
_NOT_STARTED = (126, 127)


@dataclass(frozen=True)
class DeadEnd:
    """The first case and the line that says why the runner failed before the artifact ran."""

    case_id: str
    error: str

    def lines(self) -> list[str]:
        """The block ``init``, ``eval`` and ``evolve`` print."""
        return [
            "every case failed before the artifact ran: the runner itself is broken, so no edit can help",
            f"  first error ({self.case_id}): {self.error}",
            "  fix the runner (its command, a missing file or program) and run again",
        ]


def first_error(case: CaseResult) -> str:
    """The line that says what went wrong: the last one naming a harness error (stderr first), else stderr's
    last line (a traceback's exception), else the runner's error."""
    output = case.output
    texts = (output.stderr_tail, output.error or "", output.stdout_tail)
    lines = [line.strip() for text in texts for line in text.splitlines() if line.strip()]
    harness = [line for line in lines if _HARNESS.search(line)]
    if harness:
        return harness[-1][:300]
    stderr = [line.strip() for line in output.stderr_tail.splitlines() if line.strip()]
    if stderr:  # a traceback ends with the exception
        return stderr[-1][:300]
    if lines:
        return lines[0][:300]
    return f"exit code {output.exit_code}" if output.exit_code is not None else "no output"


def _in_artifact(case: CaseResult, editable: set[str]) -> bool:
    """Whether the case's traceback runs through an editable file (the artifact started, then crashed)."""
    text = f"{case.output.stderr_tail}\n{case.output.error or ''}"
    frames = _FRAME.findall(text)
    return any(frame == name or frame.endswith("/" + name) for frame in frames for name in editable)


def _harness_failed(case: CaseResult, editable: set[str]) -> bool:
    output = case.output
    if case.passed or output.ok or output.timed_out or _in_artifact(case, editable):
        return False
    if output.exit_code in _NOT_STARTED:
        return True
    text = f"{output.error or ''}\n{output.stderr_tail}"
    return bool(_HARNESS.search(text)) and not any(name in text for name in editable)


def dead_end(result: EvalResult | None, editable: Iterable[str]) -> DeadEnd | None:
    """The dead end ``result`` shows (see the module docstring), or None."""
    if result is None or not result.cases:
        return None
    names = {name for name in editable if name}
    if not all(_harness_failed(case, names) for case in result.cases):
        return None
    first = result.cases[0]
    return DeadEnd(first.id, first_error(first))
