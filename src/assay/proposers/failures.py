"""How a dev case failed, in neutral words: by check type and position, never a check's value or evidence
(``output missing an expected element``, ``rubric check 2 failed``), and what kind of failure it was (crash,
timeout, wrong format, wrong content, judged) for choosing which failing cases a proposer is shown."""

from __future__ import annotations

import re
from typing import Any

from assay.model import CaseResult, CheckResult
from assay.proposers.redaction import Redactor

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
NOT_RUN = "not run (the case was decided without it)"
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
        if not check.passed and not check.skipped:
            how = describe_check(check, result, redact, number=number, reasons=show_judge_reasons)
            if how not in parts:
                parts.append(how)
    if not parts:
        parts.append("score below the case's threshold")
    return "; ".join(parts)


def describe_check(check: CheckResult, result: CaseResult, redact: Any, *, number: int, reasons: bool) -> str:
    """How one failed check failed (see :func:`describe_failure`); ``redact`` is applied to runner errors and
    judge reasons. A judged check that was not run (the case failed without it) is ``not run``."""
    if check.skipped:
        return NOT_RUN
    kind = check.type
    if kind == "runner":
        error = result.output.error or check.evidence or "runner failed"
        return "runner failed: " + str(redact(" ".join(error.split())))[:300]
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


KINDS = ("crash", "timeout", "format", "content", "judged")
_FORMAT = frozenset(
    ["json_valid", "json_schema", "contains_json", "is_json", "xml", "is_xml", "contains_xml", "html",
     "is_html", "contains_html", "sql", "is_sql", "contains_sql", "word_count", "lengths", "tool_call_valid",
     "is_valid_openai_tools_call", "finish_reason"]
)  # fmt: skip
_JUDGED = frozenset(
    ["llm_judge", "fact_coverage", "similar", "factuality", "closed_qa", "g_eval", "answer_relevance",
     "context_relevance", "context_faithfulness", "context_recall", "conversation_relevance", "classifier",
     "model_graded", "is_refusal"]
)  # fmt: skip


def failure_kind(result: CaseResult) -> str:
    """What kind of failure a failing case is: ``crash`` (the runner failed or exited non-zero), ``timeout``,
    ``format`` (a structure check failed: JSON, XML, SQL, schema, length), ``judged`` (only model-graded checks failed) or
    ``content`` (the rest: missing or forbidden elements, patterns, wrong output)."""
    out = result.output
    if out.timed_out:
        return "timeout"
    failed = [c.type.removeprefix("not-") for c in result.checks if not c.passed]
    if out.error is not None or (out.exit_code not in (None, 0)) or "runner" in failed:
        return "crash"
    if any(kind in _FORMAT for kind in failed):
        return "format"
    if failed and all(kind in _JUDGED for kind in failed):
        return "judged"
    return "content"
