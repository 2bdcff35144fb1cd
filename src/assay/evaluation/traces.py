"""Trace files: one JSON document per case run, written as soon as the case finishes.

A trace is ``{"version": 1, "case": <Case>, "result": <CaseResult>}``: the case as run (input, vars, tags and
its check specs, in order) and everything about the run (output, stdout/stderr tails, timing, tokens, cost,
each check's result; a runner failure adds a final ``runner`` check). Check results line up with the case's
check specs by position.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from assay.fsutil import atomic_write_bytes, safe_name
from assay.model import Case, CaseResult

TRACE_VERSION = 1


class Trace(BaseModel):
    """One case run, as stored on disk."""

    version: int = TRACE_VERSION
    case: Case
    result: CaseResult


def trace_bytes(case: Case, result: CaseResult) -> bytes:
    # Serialised piecewise by pydantic's Rust serializer: model_construct plus model_dump_json of a wrapper,
    # or model_dump plus json.dumps, cost several times more at thousands of traces per evaluation.
    return b"".join(
        (
            b'{"version":%d,"case":' % TRACE_VERSION,
            case.__pydantic_serializer__.to_json(case),
            b',"result":',
            result.__pydantic_serializer__.to_json(result),
            b"}",
        )
    )


def write_trace(trace_dir: Path, case: Case, result: CaseResult) -> Path:
    """Write the trace of one case atomically and return its path."""
    path = trace_dir / f"{safe_name(case.id)}.json"
    atomic_write_bytes(path, trace_bytes(case, result))
    return path


def read_trace(path: Path) -> Trace:
    """Load a trace file."""
    return Trace.model_validate_json(path.read_bytes())
