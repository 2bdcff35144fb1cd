"""Trace files: one JSON document per case run, written as soon as the case finishes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.fsutil import atomic_write_text, safe_name
from assay.model import Case, CaseResult

TRACE_VERSION = 1


def trace_document(case: Case, result: CaseResult) -> dict[str, Any]:
    """Everything about one case run: input, output, tails, timing, tokens, cost and each check."""
    return {
        "version": TRACE_VERSION,
        "case": {
            "id": case.id,
            "split": result.split.value,
            "input": case.input,
            "vars": case.vars,
            "tags": case.tags,
            "source": case.source,
        },
        "output": result.output.model_dump(mode="json"),
        "verdict": {"passed": result.passed, "score": result.score},
        # Configured checks come first, in order; a runner pseudo-check (if any) follows them.
        "checks": [
            {**check.model_dump(mode="json"), "spec": spec.model_dump(mode="json")}
            for check, spec in zip(result.checks, case.checks, strict=False)
        ]
        + [extra.model_dump(mode="json") for extra in result.checks[len(case.checks) :]],
        "duration_s": result.duration_s,
        "tokens": result.tokens,
        "cost_usd": result.cost_usd,
    }


def write_trace(trace_dir: Path, case: Case, result: CaseResult) -> Path:
    """Write the trace of one case atomically and return its path."""
    path = trace_dir / f"{safe_name(case.id)}.json"
    atomic_write_text(path, json.dumps(trace_document(case, result), indent=2, ensure_ascii=False))
    return path
