"""An evaluation as its report shows it: one row per case with its input, output and every check's verdict,
and optionally the same case from another evaluation or run beside it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from assay.evaluation.evaluator import EvalResult
from assay.model import Case, CaseResult
from assay.report.views import CaseView, Clip

INPUT_CHARS = 1500
EVAL_OUTPUT_CHARS = 4000


@dataclass(frozen=True)
class EvalRow:
    """One case: its input as run, its result here and (when comparing) the other side's result."""

    case_id: str
    split: str
    input: Clip
    result: CaseView
    other: CaseView | None = None

    @property
    def verdict(self) -> str:
        return self.result.verdict


@dataclass
class EvalSide:
    """The totals of one side of the report."""

    label: str
    passed: int
    total: int
    mean_score: float
    tokens: int
    cost_usd: float
    seconds: float

    @classmethod
    def of(cls, label: str, result: EvalResult) -> EvalSide:
        return cls(
            label,
            result.passed,
            result.total,
            result.mean_score,
            result.tokens,
            result.cost_usd,
            result.duration_s,
        )


@dataclass
class EvalReport:
    """Everything the evaluation report shows."""

    title: str
    side: EvalSide
    rows: list[EvalRow] = field(default_factory=list)
    other: EvalSide | None = None
    trace_dir: str | None = None
    unsandboxed: str | None = None


def case_input(case: Case | None) -> str:
    """A case's input as the runner got it: its text, or its vars as JSON."""
    if case is None:
        return ""
    if case.input is not None:
        return case.input
    return json.dumps(case.vars, indent=1, ensure_ascii=False, default=str)


def build_eval_report(
    title: str,
    result: EvalResult,
    cases: Sequence[Case],
    *,
    other: EvalResult | None = None,
    other_label: str = "",
) -> EvalReport:
    """The report of ``result`` (the cases it ran are looked up by id), beside ``other`` when given."""
    by_id = {c.id: c for c in cases}
    theirs: dict[str, CaseResult] = {c.id: c for c in other.cases} if other else {}
    rows = [
        EvalRow(
            case_id=c.id,
            split=c.split.value,
            input=Clip.of(case_input(by_id.get(c.id)), INPUT_CHARS),
            result=CaseView.of(c, limit=EVAL_OUTPUT_CHARS),
            other=CaseView.of(theirs[c.id], limit=EVAL_OUTPUT_CHARS) if c.id in theirs else None,
        )
        for c in result.cases
    ]
    return EvalReport(
        title=title,
        side=EvalSide.of("this evaluation", result),
        rows=rows,
        other=EvalSide.of(other_label, other) if other is not None else None,
        trace_dir=result.trace_dir,
        unsandboxed=result.unsandboxed if result.sandbox == "none" else None,
    )
