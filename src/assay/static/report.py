"""What the L1 static tier found: findings, the report and its one-line-per-finding rendering."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field

Severity = Literal["critical", "warning"]


class Finding(BaseModel):
    """One problem in one file. ``line`` is 1-based, ``None`` for a whole-file or missing-path finding.

    ``message`` says what was found; for secrets it names the kind of secret, never its value.
    """

    severity: Severity
    rule: str
    file: str
    line: int | None = None
    message: str

    def render(self) -> str:
        """``severity file:line rule: message`` (``:line`` omitted when there is none)."""
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{self.severity} {where} {self.rule}: {self.message}"


class StaticReport(BaseModel):
    """The L1 verdict on an artifact: every finding, the files looked at, and ``passed`` (no critical one)."""

    findings: list[Finding] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    duration_s: float = 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        return not self.critical

    @property
    def critical(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "critical"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    def blocked_line(self) -> str:
        """Why L1 stopped the artifact, in one line: ``2 critical findings, the first: priority.py:3 syntax:
        ...`` ("" when it passed)."""
        critical = self.critical
        if not critical:
            return ""
        first = critical[0].render().removeprefix("critical ")
        count = (
            "1 critical finding" if len(critical) == 1 else f"{len(critical)} critical findings, the first"
        )
        return f"{count}: {first}"


def format_report(report: StaticReport) -> str:
    """One line per finding, critical ones first (empty string when there is none)."""
    return "\n".join(f.render() for f in report.findings)
