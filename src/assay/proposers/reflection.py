"""Reflection inline: which dev cases the llm proposer is shown in full, and what it sees of each.

GEPA's reflective step shows a model each example's input, the output the system produced and the feedback on
it. Here the choice is **diverse first**: one failing case of each kind in turn (crash, timeout, wrong format,
wrong content, judged), regressions (cases the baseline passed) first within a kind, then one or two passing
cases for contrast, then the remaining failing cases the same way. Each shown case carries its input (as it
is), the head and the tail of its output within a per-case budget, the stderr tail when it crashed or timed
out, and each check's neutral verdict — all of it, but the input, through the redactor.

An output is redacted over a window a little wider than what is shown (:data:`MARGIN` characters past the cut)
before it is cut, so a secret that straddles the cut is removed whole, and a cut never splits a
``[redacted]`` marker.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from itertools import zip_longest

from assay.model import Case, CaseResult
from assay.proposers.base import Reflection
from assay.proposers.budget import BYTES_PER_TOKEN
from assay.proposers.failures import KINDS, describe_check, failure_kind
from assay.proposers.redaction import REDACTED, Redactor

MAX_FAILING = 40
CONTRAST = 2
MARGIN = 4096
MIN_CASE_TOKENS = 100
MAX_CASE_TOKENS = 800
CASE_SHARE = 40  # a shown output gets 1/40 of the context budget, within the bounds above


def case_chars(context_tokens: int) -> int:
    """Characters of output shown per case (head and tail together) for a prompt of ``context_tokens``."""
    tokens = min(MAX_CASE_TOKENS, max(MIN_CASE_TOKENS, context_tokens // CASE_SHARE))
    return tokens * BYTES_PER_TOKEN


def choose(
    dev: Sequence[tuple[Case, CaseResult]], regressed: Collection[str] = (), *, limit: int = MAX_FAILING
) -> tuple[list[tuple[Case, CaseResult]], int]:
    """The cases to show, in priority order, and how many failing ones were left out (over ``limit``)."""
    by_kind: dict[str, list[tuple[Case, CaseResult]]] = {kind: [] for kind in KINDS}
    for case, result in dev:
        if not result.passed and not result.unjudged:
            by_kind[failure_kind(result)].append((case, result))
    for cases in by_kind.values():
        cases.sort(key=lambda pair: pair[0].id not in regressed)  # stable: regressions first
    rounds = [[pair for pair in row if pair is not None] for row in zip_longest(*by_kind.values())]
    failing = [pair for row in rounds for pair in row]
    shown, left_out = failing[:limit], max(0, len(failing) - limit)
    passing = [(c, r) for c, r in dev if r.passed and (r.output.text or r.output.stdout_tail).strip()]
    first_round = len(rounds[0]) if rounds else 0
    return shown[:first_round] + passing[:CONTRAST] + shown[first_round:], left_out


def reflect(
    case: Case,
    result: CaseResult,
    redactor: Redactor,
    *,
    label: int,
    chars: int,
    regressed: bool = False,
    show_judge_reasons: bool = False,
) -> Reflection:
    """What the proposer sees of one case, in ``chars`` characters of output (head and tail)."""
    redact = redactor.redact
    out = result.output
    text = out.text or out.stdout_tail
    head, tail = _head_and_tail(text, chars, redact)
    crashed = not result.passed and failure_kind(result) in ("crash", "timeout")
    return Reflection(
        label=label,
        id=redact(case.id),
        kind="passed" if result.passed else failure_kind(result),
        input=_input(case, chars),
        output_head=head,
        output_tail=tail,
        output_chars=len(text),
        stderr_tail=_tail(out.stderr_tail, chars // 2, redact) if crashed else "",
        error=redact(" ".join(out.error.split()))[:300] if out.error else None,
        exit_code=out.exit_code,
        seconds=round(out.duration_s, 3),
        regressed=regressed,
        verdicts=[
            (
                check.type,
                "passed"
                if check.passed and not check.skipped
                else redact(describe_check(check, result, redact, number=n, reasons=show_judge_reasons)),
            )
            for n, check in enumerate(result.checks, 1)
        ],
    )


def _input(case: Case, chars: int) -> dict[str, object]:
    """The case's own input or vars, as they are (a long one cut, with its length said)."""
    if case.input is not None:
        value = case.input
        return {"input": value if len(value) <= chars else value[:chars] + f"… ({len(value)} characters)"}
    dumped = json.dumps(case.vars, ensure_ascii=False)
    if len(dumped) <= chars:
        return {"vars": case.vars}
    return {"vars_json": dumped[:chars] + f"… ({len(dumped)} characters)"}


def _head_and_tail(text: str, chars: int, redact: Callable[[str], str]) -> tuple[str, str]:
    if len(text) <= chars + MARGIN:
        whole = redact(text)
        if len(whole) <= chars:
            return whole, ""
        return _cut_head(whole, chars - chars // 2), _cut_tail(whole, chars // 2)
    return _head(text, chars - chars // 2, redact), _tail(text, chars // 2, redact)


def _head(text: str, limit: int, redact: Callable[[str], str]) -> str:
    return _cut_head(redact(text[: limit + MARGIN]), limit)


def _tail(text: str, limit: int, redact: Callable[[str], str]) -> str:
    if not text:
        return ""
    return _cut_tail(redact(text[-(limit + MARGIN) :]), limit)


def _cut_head(text: str, limit: int) -> str:
    """The first ``limit`` characters, extended to the end of a marker the cut would split."""
    if len(text) <= limit:
        return text
    cut = limit
    at = text.find(REDACTED, max(0, limit - len(REDACTED) + 1), limit + len(REDACTED) - 1)
    if at != -1 and at < limit:
        cut = at + len(REDACTED)
    return text[:cut]


def _cut_tail(text: str, limit: int) -> str:
    """The last ``limit`` characters, extended to the start of a marker the cut would split."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    at = text.find(REDACTED, max(0, cut - len(REDACTED) + 1), cut + len(REDACTED) - 1)
    if at != -1 and at < cut:
        cut = at
    return text[cut:]
