"""A project whose answer key is planted everywhere a careless proposer view could pick it up: check values,
expected outputs and holdout inputs that also appear in the runner outputs, stderr, errors, check evidence,
gate reasons and history of failing dev cases."""

from __future__ import annotations

import json

from assay.model import Case, CaseResult, CheckResult, CheckSpec, Output, Split
from assay.proposers.base import HistoryEntry
from assay.proposers.redaction import Redactor
from assay.proposers.secrets import secrets_for, words_for

CONTAINS = "Quokka-Lantern-7731"
NOT_CONTAINS = "forbidden basilisk phrase"
REGEX = r"ORD-\d{4}-ZETA"
RUBRIC_WORD = "Marzipan Protocol"
RUBRIC = f"The reply must mention the '{RUBRIC_WORD}' and stay polite."
EXPECTED = 'velvet "thunder" 99\nsecond line of the expected answer'
HOLDOUT_INPUT = "holdout question about obsidian giraffes"
HOLDOUT_EXPECTED = "cerulean walrus verdict"
SCRIPT = "python3 graders/secret_grader_x9.py --strict"
SCHEMA_FIELD = "refund_reference_code"
FACT = "the moon base opened in 2087"

PLANTED = [CONTAINS, NOT_CONTAINS, REGEX, RUBRIC_WORD, RUBRIC, EXPECTED, HOLDOUT_INPUT, HOLDOUT_EXPECTED,
           SCRIPT, SCHEMA_FIELD, FACT, "secret_grader_x9.py"]  # fmt: skip


def forms(value: str) -> list[str]:
    """The spellings a leak could take: exact, upper, lower, JSON-escaped (once and twice)."""
    once = json.dumps(value)[1:-1]
    return [value, value.upper(), value.lower(), once, json.dumps(once)[1:-1]]


def leaks(text: str) -> list[str]:
    """Every planted value found in ``text`` in any of its forms (case-insensitively)."""
    lowered = text.lower()
    found = []
    for value in PLANTED:
        for form in forms(value):
            if form.lower() in lowered:
                found.append(form)
    return found


def redactor() -> Redactor:
    """The redactor of the planted project: its secrets and structural words, as the loop builds it."""
    dev, holdout = dev_cases(), holdout_cases()
    return Redactor(secrets_for(dev, holdout), words_for(dev, holdout))


def dev_cases() -> list[Case]:
    return [
        Case(
            id="refund",
            input="A customer asks for a refund.",
            expected=EXPECTED,
            checks=[
                CheckSpec(type="contains", value=CONTAINS),
                CheckSpec(type="regex", value=REGEX),
                CheckSpec(type="not_contains", value=NOT_CONTAINS),
                CheckSpec(type="json_schema", value={"type": "object", "required": [SCHEMA_FIELD]}),
            ],
        ),
        Case(
            id="polite",
            vars={"topic": "late delivery"},
            checks=[
                CheckSpec(type="llm_judge", value=RUBRIC),
                CheckSpec(type="script", value=SCRIPT),
                CheckSpec(type="fact_coverage", value=[FACT]),
            ],
        ),
        Case(id="fine", input="Say hello.", checks=[CheckSpec(type="contains", value="hello")]),
    ]


def holdout_cases() -> list[Case]:
    return [
        Case(
            id="h1",
            input=HOLDOUT_INPUT,
            expected=HOLDOUT_EXPECTED,
            checks=[CheckSpec(type="equals", value=HOLDOUT_EXPECTED)],
        )
    ]


def _echo(*values: str) -> str:
    return " | ".join(values)


def dev_results() -> list[tuple[Case, CaseResult]]:
    """Failing dev results whose outputs echo the answer key in every spelling, plus one passing case."""
    refund, polite, fine = dev_cases()
    text = _echo(CONTAINS.upper(), REGEX, NOT_CONTAINS, EXPECTED, HOLDOUT_INPUT, SCHEMA_FIELD)
    stderr = json.dumps({"log": _echo(EXPECTED, REGEX, SCRIPT, HOLDOUT_EXPECTED)})
    refund_result = CaseResult(
        id="refund",
        split=Split.DEV,
        passed=False,
        score=0.25,
        output=Output(text=text, stdout_tail=text.lower(), stderr_tail=stderr, exit_code=0, duration_s=0.4),
        checks=[
            CheckResult(type="contains", passed=False, score=0, evidence=f"{CONTAINS!r} not found in output"),
            CheckResult(type="regex", passed=False, score=0, evidence=f"no match for {REGEX}"),
            CheckResult(type="not_contains", passed=False, score=0, evidence=f"found {NOT_CONTAINS!r}"),
            CheckResult(type="json_schema", passed=False, score=0, evidence=f"missing {SCHEMA_FIELD}"),
        ],
    )
    polite_result = CaseResult(
        id="polite",
        split=Split.DEV,
        passed=False,
        score=0.0,
        output=Output(
            text=f"We follow the {RUBRIC_WORD.lower()}; {FACT}.",
            stderr_tail=f"Traceback: {SCRIPT} failed\n  File secret_grader_x9.py, line 3",
            error=f"command {SCRIPT!r} exited 2",
            exit_code=2,
        ),
        checks=[
            CheckResult(
                type="llm_judge",
                passed=False,
                score=0,
                evidence=f"judge FAIL (0/3 votes pass): it never names the {RUBRIC_WORD} and is rude",
            ),
            CheckResult(type="script", passed=False, score=0, evidence=f"{SCRIPT} exited 1"),
            CheckResult(type="fact_coverage", passed=False, score=0, evidence=f"missing 1/1 facts: {FACT!r}"),
            CheckResult(type="runner", passed=False, score=0, evidence=f"runner failed: {SCRIPT}"),
        ],
    )
    fine_result = CaseResult(
        id="fine",
        split=Split.DEV,
        passed=True,
        score=1.0,
        output=Output(text="hello"),
        checks=[CheckResult(type="contains", passed=True, score=1)],
    )
    return [(refund, refund_result), (polite, polite_result), (fine, fine_result)]


HISTORY = [
    HistoryEntry(1, f"made it say {CONTAINS}", "discard"),
    HistoryEntry(2, "tightened the tone", "keep"),
]
LAST_GATE = [f"regression: case refund lost {EXPECTED!r}", "progress: dev score 0.50 -> 0.50"]
