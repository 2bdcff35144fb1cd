"""The shared version of a report (``--share``): no check values, no holdout or regression cases, no secrets.

Check evidence is left out (it quotes what a check expected); holdout and regression cases and their results
are dropped; every output, stderr tail and input left is redacted with the proposer's redactor (check values
and expected answers, by meaning) and any line detect-secrets or assay's patterns take for a secret is
withheld.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from assay.proposers.redaction import Redactor
from assay.report.evalview import EvalReport, EvalRow
from assay.report.run import RunReport
from assay.report.views import CaseView, Clip
from assay.static.patterns import scan_patterns, secret_lines
from assay.static.security import scan_secrets

WITHHELD = "[line withheld: it looks like a secret]"


class Sharer:
    """Redacts recorded text for a shared report with the project's redactor (see
    :func:`assay.evaluation.key_redactor.key_redactor`)."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._texts: dict[str, str] = {}

    def collect(self, clips: Iterable[Clip | None]) -> None:
        """Scan these texts for secrets in one pass (detect-secrets starts slowly)."""
        for clip in clips:
            if clip is not None and clip.text not in self._texts:
                self._texts[clip.text] = ""
        names = {f"text-{i}.txt": text for i, text in enumerate(self._texts)}
        findings = [f for name, text in names.items() for f in scan_patterns(name, text)]
        lines = secret_lines(findings) | {(f.file, f.line) for f in scan_secrets(names)}
        for name, text in names.items():
            bad = {line for file, line in lines if file == name and line is not None}
            kept = [WITHHELD if n in bad else line for n, line in enumerate(text.split("\n"), 1)]
            self._texts[text] = self._redactor.redact("\n".join(kept))

    def clip(self, clip: Clip | None) -> Clip | None:
        if clip is None:
            return None
        if clip.text not in self._texts:
            self.collect([clip])
        return Clip(self._texts[clip.text], clip.more)

    def case(self, view: CaseView) -> CaseView:
        checks = [dataclasses.replace(c, evidence=Clip("")) for c in view.checks]
        return dataclasses.replace(
            view, output=self.clip(view.output), stderr=self.clip(view.stderr), checks=checks
        )


def share_run(report: RunReport, sharer: Sharer) -> RunReport:
    """``report`` without check evidence, holdout and regression cases and secrets (a copy)."""
    nodes = []
    sharer.collect(
        clip for node in report.nodes for case in node.cases for clip in (case.output, case.stderr)
    )
    for node in report.nodes:
        nodes.append(
            dataclasses.replace(
                node,
                cases=[sharer.case(c) for c in node.cases],
                holdout=[],
                regression=[],
                holdout_score=None,
                regression_pass_rate=None,
                overfitting=None,
                gate={name: d.model_copy(update={"detail": ""}) for name, d in node.gate.items()},
            )
        )
    return dataclasses.replace(report, nodes=nodes, holdout_points=[])


def share_eval(report: EvalReport, sharer: Sharer) -> EvalReport:
    """``report`` with its dev cases only, without check evidence and secrets (a copy)."""
    rows = [row for row in report.rows if row.split == "dev"]
    sharer.collect(
        clip
        for row in rows
        for view in (row.result, row.other)
        if view is not None
        for clip in (view.output, view.stderr)
    )
    shared = [
        EvalRow(
            case_id=row.case_id,
            split=row.split,
            input=sharer.clip(row.input) or Clip(""),
            result=sharer.case(row.result),
            other=sharer.case(row.other) if row.other is not None else None,
        )
        for row in rows
    ]
    return dataclasses.replace(report, rows=shared, trace_dir=None)
