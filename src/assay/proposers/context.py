"""The proposer view: dev inputs, how failing dev cases failed, redacted trace copies, history, gate reasons.

Nothing here passes a check value, an expected output or a holdout case to a proposer: failures are described
by check type only, and every string (ids, inputs, output tails, judge reasons, gate reasons, history) goes
through the Redactor. The artifact files are passed as they are: they are what the proposer edits, and
blanking parts of them would both break the edits and point at where a check value sits.
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


def describe_failure(result: CaseResult, redactor: Redactor | None = None) -> str:
    """How a case failed, by check type, without any check value: ``output missing an expected element;
    judge said: not polite``. Judge reasons and runner errors pass through ``redactor``."""
    if result.passed:
        return "passed"
    redact = redactor.redact if redactor is not None else (lambda text: text)
    parts: list[str] = []
    for check in result.checks:
        if not check.passed:
            how = _describe_check(check, result, redact)
            if how not in parts:
                parts.append(how)
    if not parts:
        parts.append("score below the case's threshold")
    return "; ".join(parts)


def _describe_check(check: CheckResult, result: CaseResult, redact: Any) -> str:
    kind = check.type
    if kind == "runner":
        error = result.output.error or check.evidence or "runner failed"
        return "runner failed: " + redact(" ".join(error.split()))[:300]
    if kind.removeprefix("not-") == "llm_judge":
        match = _JUDGE_REASON.match(check.evidence)
        reason = " ".join(match.group(1).split()) if match else ""
        return f"judge said: {redact(reason)[:300]}" if reason else "the judge rejected the output"
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
    entry: dict[str, Any] = {"id": redactor.redact(case.id)}
    if case.input is not None:
        entry["input"] = redactor.redact(case.input)
    else:
        entry["vars"] = redactor.redact_any(case.vars)
    return entry


def _trace_copy(case: Case, result: CaseResult, redactor: Redactor) -> dict[str, Any]:
    """A trace without its answer key: output tails, verdict, and per check only type, passed and how."""
    out = result.output
    redact = redactor.redact
    return {
        "case": _case_entry(case, redactor),
        "output": {
            "text_tail": _tail(redact(out.text), TEXT_TAIL),
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
                "how": "passed" if c.passed else redact(_describe_check(c, result, redact)),
            }
            for c in result.checks
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
) -> ProposerView:
    """The view of one generation. Results that are not dev results are ignored; redacted trace copies of
    failing dev cases are written to ``trace_dir`` (``NN-<redacted case id>.json``: numbered, so that a check
    value hidden in a case id cannot reach the proposer through a file name) and listed by absolute path."""
    dev = [(c, r) for c, r in dev_results if r.split == Split.DEV]
    failures: list[dict[str, Any]] = []
    trace_paths: list[str] = []
    for case, result in dev:
        if result.passed:
            continue
        failures.append(
            {"id": redactor.redact(case.id), "how": redactor.redact(describe_failure(result, redactor))}
        )
        name = safe_name(redactor.redact(case.id).replace(REDACTED, "x"))
        path = trace_dir.resolve() / f"{len(trace_paths) + 1:02d}-{name}.json"
        copy = json.dumps(_trace_copy(case, result, redactor), indent=2, ensure_ascii=False)
        # Every string was redacted already; this pass only catches forms that JSON escaping produced.
        atomic_write_text(path, redactor.redact(copy, short=False))
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
            }
            for item in history
        ],
        trace_paths=trace_paths,
    )
