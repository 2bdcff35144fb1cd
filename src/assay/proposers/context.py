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
from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from assay.fsutil import atomic_write_text, safe_name
from assay.model import Case, CaseResult, Split
from assay.proposers.base import CaseFailure, DevCase, HistoryEntry, ProposerView
from assay.proposers.budget import DEFAULT_CONTEXT_TOKENS
from assay.proposers.failures import describe_check, describe_failure
from assay.proposers.prompt import render_prompt
from assay.proposers.redaction import REDACTED, Redactor, secrets_for
from assay.proposers.reflection import case_chars, choose, reflect

__all__ = ["REDACTED", "Redactor", "build_view", "describe_failure", "render_prompt", "secrets_for"]

TEXT_TAIL = 2000
STREAM_TAIL = 1500
# An output is redacted before it is cut, over its last this many characters: a secret (or an encoded run up
# to the redactor's limit) that reaches into the shown tail is seen whole.
REDACT_WINDOW = 1 << 17


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


def _dev_case(case: Case, redactor: Redactor) -> DevCase:
    """A dev case as a proposer sees it: its id redacted, its own input or vars as they are."""
    if case.input is not None:
        return DevCase(redactor.redact(case.id), input=case.input)
    return DevCase(redactor.redact(case.id), vars=dict(case.vars))


def _case_json(case: DevCase) -> dict[str, Any]:
    """A dev case in a trace copy: ``{"id", "input"}`` or ``{"id", "vars"}``."""
    if case.input is not None:
        return {"id": case.id, "input": case.input}
    return {"id": case.id, "vars": case.vars}


def _trace_copy(case: Case, result: CaseResult, redactor: Redactor, *, reasons: bool) -> dict[str, Any]:
    """A trace without its answer key: output tails, verdict, and per check only type, passed and how."""
    out = result.output
    redact = redactor.redact
    return {
        "case": _case_json(_dev_case(case, redactor)),
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
                if c.passed and not c.skipped
                else redact(describe_check(c, result, redact, number=number, reasons=reasons)),
            }
            for number, c in enumerate(result.checks, 1)
        ],
    }


def build_view(
    *,
    artifact: dict[str, str],
    layer: int,
    dev_results: Sequence[tuple[Case, CaseResult]],
    history: Sequence[HistoryEntry],
    last_gate: Sequence[str],
    redactor: Redactor,
    trace_dir: Path,
    show_judge_reasons: bool = False,
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    regressed: Collection[str] = (),
    best_diff: str = "",
) -> ProposerView:
    """The view of one generation. Results that are not dev results are ignored; redacted trace copies of
    failing dev cases are written to ``trace_dir`` (``NN-<redacted case id>.json``: numbered, so that a check
    value hidden in a case id cannot reach the proposer through a file name) and listed by absolute path.
    Judge reasons are shown (redacted) only with ``show_judge_reasons``.

    The reflections (cases shown inline by the llm proposer) are chosen by
    :func:`assay.proposers.reflection.choose`, ``regressed`` naming the dev cases the baseline passed; each
    shows as much output as a prompt of ``context_tokens`` allows per case. ``best_diff``, the best's diff
    against the baseline, is artifact text and passed as it is. Each ``history`` entry is shown with its
    description and decision redacted."""
    dev = [(c, r) for c, r in dev_results if r.split == Split.DEV]
    failures: list[CaseFailure] = []
    trace_paths: list[str] = []
    for case, result in dev:
        if result.passed:
            continue
        how = describe_failure(result, redactor, show_judge_reasons=show_judge_reasons)
        failures.append(CaseFailure(redactor.redact(case.id), redactor.redact(how)))
        name = safe_name(redactor.redact(case.id).replace(REDACTED, "x"))
        path = trace_dir.resolve() / f"{len(trace_paths) + 1:02d}-{name}.json"
        # Every string in it is redacted already (the redactor sees through JSON escaping), except the case's
        # own input, which must stay as it is.
        copy = _trace_copy(case, result, redactor, reasons=show_judge_reasons)
        atomic_write_text(path, json.dumps(copy, indent=2, ensure_ascii=False))
        trace_paths.append(str(path))
    chosen, more_failing = choose(dev, regressed)
    # Labels number the failing cases first, then the passing ones; the list stays in priority order.
    by_label = sorted(range(len(chosen)), key=lambda i: (chosen[i][1].passed, i))
    labels = {index: label for label, index in enumerate(by_label, 1)}
    chars = case_chars(context_tokens)
    reflections = [
        reflect(
            case,
            result,
            redactor,
            label=labels[index],
            chars=chars,
            regressed=case.id in regressed,
            show_judge_reasons=show_judge_reasons,
        )
        for index, (case, result) in enumerate(chosen)
    ]
    return ProposerView(
        artifact=dict(artifact),
        layer=layer,
        dev_cases=[_dev_case(case, redactor) for case, _ in dev],
        failures=failures,
        last_gate=[redactor.redact(reason) for reason in last_gate],
        history=[
            replace(
                item, description=redactor.redact(item.description), decision=redactor.redact(item.decision)
            )
            for item in history
        ],
        trace_paths=trace_paths,
        reflections=reflections,
        more_failing=more_failing,
        best_diff=best_diff,
        context_tokens=context_tokens,
    )
