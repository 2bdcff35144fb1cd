"""What a report shows of cases and checks: recorded text clipped to a length, never rewritten.

The report is for the user, not the proposer: outputs, evidence and check results appear as they were recorded
(cut at a length, with the number of characters left out), escaped by the page template.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from assay.model import CaseResult, CheckResult

OUTPUT_CHARS = 1500
EVIDENCE_CHARS = 300


@dataclass(frozen=True)
class Clip:
    """A recorded text cut at a length: ``text`` as recorded up to the cut, ``more`` characters left out."""

    text: str
    more: int = 0

    @classmethod
    def of(cls, text: str, limit: int) -> Clip:
        if len(text) <= limit:
            return cls(text)
        return cls(text[:limit], len(text) - limit)

    def cut(self, limit: int) -> Clip:
        """This clip cut again, at ``limit`` characters."""
        if len(self.text) <= limit:
            return self
        return Clip(self.text[:limit], self.more + len(self.text) - limit)


@dataclass(frozen=True)
class CheckView:
    """One check's verdict on one output."""

    type: str
    passed: bool
    score: float
    evidence: Clip
    skipped: bool = False
    error: bool = False

    @classmethod
    def of(cls, check: CheckResult) -> CheckView:
        return cls(
            type=check.type,
            passed=check.passed,
            score=check.score,
            evidence=Clip.of(check.evidence, EVIDENCE_CHARS),
            skipped=check.skipped,
            error=check.error,
        )


@dataclass(frozen=True)
class CaseView:
    """One case's result: verdict, score, its output and stderr tail (None: left out), every check."""

    id: str
    split: str
    passed: bool
    score: float
    unjudged: bool
    seconds: float
    output: Clip | None
    stderr: Clip | None
    checks: list[CheckView] = field(default_factory=list)
    trace_path: str | None = None

    @property
    def verdict(self) -> str:
        return "unjudged" if self.unjudged else "pass" if self.passed else "fail"

    def without_output(self) -> CaseView:
        """This case without its output and stderr (the trace file holds them)."""
        return dataclasses.replace(self, output=None, stderr=None)

    def cut(self, limit: int) -> CaseView:
        """This case with its output and stderr cut at ``limit`` characters and the evidence of its failing
        checks too; the evidence of passing checks left out (the trace file holds it all)."""
        checks = [
            CheckView(
                c.type,
                c.passed,
                c.score,
                c.evidence.cut(limit) if not c.passed else Clip(""),
                c.skipped,
                c.error,
            )
            for c in self.checks
        ]
        return CaseView(
            self.id,
            self.split,
            self.passed,
            self.score,
            self.unjudged,
            self.seconds,
            self.output.cut(limit) if self.output else None,
            self.stderr.cut(limit) if self.stderr else None,
            checks,
            self.trace_path,
        )

    @classmethod
    def of(cls, result: CaseResult, *, with_output: bool = True, limit: int = OUTPUT_CHARS) -> CaseView:
        out = result.output
        text = out.text if out.text or not out.error else f"({out.error})"
        return cls(
            id=result.id,
            split=result.split.value,
            passed=result.passed,
            score=result.score,
            unjudged=result.unjudged,
            seconds=result.duration_s,
            output=Clip.of(text, limit) if with_output else None,
            stderr=Clip.of(out.stderr_tail, limit) if with_output and out.stderr_tail else None,
            checks=[CheckView.of(c) for c in result.checks],
            trace_path=result.trace_path,
        )


@dataclass(frozen=True)
class DiffLine:
    """One line of a unified diff and its kind: ``add``, ``del``, ``hunk``, ``file`` or ``ctx``."""

    kind: str
    text: str


MAX_DIFF_LINES = 400


def diff_lines(diff: str, limit: int = MAX_DIFF_LINES) -> tuple[list[DiffLine], int]:
    """A unified diff as typed lines (at most ``limit``) and the number of lines left out."""
    lines = diff.splitlines()
    shown = []
    for line in lines[:limit]:
        if line.startswith(("+++", "---", "diff --git", "index ", "similarity ", "rename ")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        shown.append(DiffLine(kind, line))
    return shown, max(0, len(lines) - limit)
