"""The proposer view: dev inputs, how failing dev cases failed, redacted trace copies, history, gate reasons.

Nothing here passes a check value, an expected output or a holdout case to a proposer: failures are described
by check type only — a failed rubric as "rubric check N failed", its judge's reasons only when
``show_judge_reasons`` — and every string (ids, output tails, errors, judge reasons, gate reasons, history) goes
through the Redactor. Two things are passed as they are: a dev case's own input and vars (a proposer may see
them, even when a check value can be derived from one: slugify's ``Hello World`` and ``hello-world``), and the
artifact files — they are what the proposer edits, and blanking parts of them would both break the edits and
point at where a check value sits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.fsutil import atomic_write_text, safe_name
from assay.model import Case, CaseResult, CheckResult, Split
from assay.proposers.base import ProposerView
from assay.proposers.prompt import render_prompt
from assay.proposers.redaction import REDACTED, Redactor, secrets_for

__all__ = ["REDACTED", "Redactor", "build_view", "describe_failure", "render_prompt", "secrets_for"]

TEXT_TAIL = 2000
STREAM_TAIL = 1500
# An output is redacted before it is cut, over its last this many characters: a secret (or an encoded run up
# to the redactor's limit) that reaches into the shown tail is seen whole.
REDACT_WINDOW = 1 << 17
_HOW = {
    "equals": "output differs from the expected output",
    "not-equals": "output equals a forbidden output",
    "contains": "output missing an expected element",
    "icontains": "output missing an expected element",
    "contains_all": "output missing some expected elements",
    "icontains_all": "output missing some expected elements",
    "contains_any": "output contains none of the expected elements",
    "icontains_any": "output contains none of the expected elements",
    "not_contains": "output contains a forbidden element",
    "starts_with": "output does not start as expected",
    "regex": "output does not match the expected pattern",
    "not-regex": "output matches a forbidden pattern",
    "json_valid": "output is not valid JSON",
    "not-json_valid": "output is valid JSON but must not be",
    "json_schema": "output JSON does not have the expected structure",
    "script": "a check script rejected the output",
    "python": "a python check rejected the output",
    "file_exists": "an expected file is missing",
    "cost": "the run cost more than allowed",
    "latency": "the run took longer than allowed",
    "similar": "output is not close enough to the reference answer",
}
_JUDGE_REASON = re.compile(r"^judge (?:PASS|FAIL) \([^)]*\): (.+)$", re.DOTALL)
_FACTS_MISSING = re.compile(r"^missing (\d+/\d+) facts")


def describe_failure(
    result: CaseResult, redactor: Redactor | None = None, *, show_judge_reasons: bool = False
) -> str:
    """How a case failed, by check type, without any check value: ``output missing an expected element;
    rubric check 2 failed``. Runner errors, and judge reasons when ``show_judge_reasons``, pass through
    ``redactor`` (``rubric check 2 failed: judge said: not polite``)."""
    if result.passed:
        return "passed"
    redact = redactor.redact if redactor is not None else (lambda text: text)
    parts: list[str] = []
    for number, check in enumerate(result.checks, 1):
        if not check.passed:
            how = _describe_check(check, result, redact, number=number, reasons=show_judge_reasons)
            if how not in parts:
                parts.append(how)
    if not parts:
        parts.append("score below the case's threshold")
    return "; ".join(parts)


def _describe_check(
    check: CheckResult, result: CaseResult, redact: Any, *, number: int, reasons: bool
) -> str:
    kind = check.type
    if kind == "runner":
        error = result.output.error or check.evidence or "runner failed"
        return "runner failed: " + redact(" ".join(error.split()))[:300]
    if kind.removeprefix("not-") == "llm_judge":
        line = f"rubric check {number} failed"
        match = _JUDGE_REASON.match(check.evidence) if reasons else None
        reason = " ".join(match.group(1).split()) if match else ""
        return f"{line}: judge said: {redact(reason)[:300]}" if reason else line
    if kind == "fact_coverage":
        match = _FACTS_MISSING.match(check.evidence)
        count = f" ({match.group(1)})" if match else ""
        return f"output does not state some required facts{count}"
    if kind in _HOW:
        return _HOW[kind]
    if kind.startswith("not-"):
        return f"output passes a {kind.removeprefix('not-')} check it must fail"
    return f"{kind} check failed"


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


def _case_entry(case: Case, redactor: Redactor) -> dict[str, Any]:
    """A dev case as a proposer sees it: its id redacted, its own input or vars as they are."""
    entry: dict[str, Any] = {"id": redactor.redact(case.id)}
    if case.input is not None:
        entry["input"] = case.input
    else:
        entry["vars"] = case.vars
    return entry


def _trace_copy(case: Case, result: CaseResult, redactor: Redactor, *, reasons: bool) -> dict[str, Any]:
    """A trace without its answer key: output tails, verdict, and per check only type, passed and how."""
    out = result.output
    redact = redactor.redact
    return {
        "case": _case_entry(case, redactor),
        "output": {
            "text_tail": _tail(redact(out.text[-REDACT_WINDOW:]), TEXT_TAIL),
            "stdout_tail": _tail(redact(out.stdout_tail), STREAM_TAIL),
            "stderr_tail": _tail(redact(out.stderr_tail), STREAM_TAIL),
            "error": redact(out.error) if out.error else None,
            "exit_code": out.exit_code,
            "timed_out": out.timed_out,
            "seconds": round(out.duration_s, 3),
        },
        "verdict": {"passed": result.passed, "score": round(result.score, 4)},
        "checks": [
            {
                "type": c.type,
                "passed": c.passed,
                "how": "passed"
                if c.passed
                else redact(_describe_check(c, result, redact, number=number, reasons=reasons)),
            }
            for number, c in enumerate(result.checks, 1)
        ],
    }


def build_view(
    *,
    artifact: dict[str, str],
    layer: int,
    dev_results: Sequence[tuple[Case, CaseResult]],
    history: Sequence[dict[str, Any]],
    last_gate: Sequence[str],
    redactor: Redactor,
    trace_dir: Path,
    show_judge_reasons: bool = False,
) -> ProposerView:
    """The view of one generation. Results that are not dev results are ignored; redacted trace copies of
    failing dev cases are written to ``trace_dir`` (``NN-<redacted case id>.json``: numbered, so that a check
    value hidden in a case id cannot reach the proposer through a file name) and listed by absolute path.
    Judge reasons are shown (redacted) only with ``show_judge_reasons``."""
    dev = [(c, r) for c, r in dev_results if r.split == Split.DEV]
    failures: list[dict[str, Any]] = []
    trace_paths: list[str] = []
    for case, result in dev:
        if result.passed:
            continue
        how = describe_failure(result, redactor, show_judge_reasons=show_judge_reasons)
        failures.append({"id": redactor.redact(case.id), "how": redactor.redact(how)})
        name = safe_name(redactor.redact(case.id).replace(REDACTED, "x"))
        path = trace_dir.resolve() / f"{len(trace_paths) + 1:02d}-{name}.json"
        # Every string in it is redacted already (the redactor sees through JSON escaping), except the case's
        # own input, which must stay as it is.
        copy = _trace_copy(case, result, redactor, reasons=show_judge_reasons)
        atomic_write_text(path, json.dumps(copy, indent=2, ensure_ascii=False))
        trace_paths.append(str(path))
    return ProposerView(
        artifact=dict(artifact),
        layer=layer,
        dev_cases=[_case_entry(case, redactor) for case, _ in dev],
        failures=failures,
        last_gate=[redactor.redact(reason) for reason in last_gate],
        history=[
            {
                "generation": item.get("generation"),
                "description": redactor.redact(str(item.get("description", ""))),
                "decision": redactor.redact(str(item.get("decision", ""))),
                "proposer": str(item.get("proposer", "")),
            }
            for item in history
        ],
        trace_paths=trace_paths,
    )
