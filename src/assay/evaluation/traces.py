"""Trace files: one JSON document per case run, written as soon as the case finishes.

A trace is ``{"version": 1, "case": <Case>, "result": <CaseResult>}``: the case as run (input, vars, tags and
its check specs, in order) and everything about the run (output, stdout/stderr tails, timing, tokens, cost,
each check's result; a runner failure adds a final ``runner`` check). Check results line up with the case's
check specs by position.

Which cases get one, and whether it is gzipped (``.json.gz``), is the ``traces`` section of assay.yaml
(:class:`TracePolicy`).
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from assay.fsutil import atomic_write_bytes, safe_name
from assay.model import Case, CaseResult

if TYPE_CHECKING:
    from assay.config import TracesConfig

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


TRACE_PATTERNS = ("*.json", "*.json.gz")


@dataclass(frozen=True)
class TracePolicy:
    """Which case runs get a trace file, and whether it is gzipped (see :class:`assay.config.TracesConfig`)."""

    keep: str = "all"
    sample: float = 0.1
    compress: bool = False

    @classmethod
    def from_config(cls, config: TracesConfig) -> TracePolicy:
        return cls(config.keep, config.sample, config.compress)

    def keeps(self, result: CaseResult) -> bool:
        """Whether the run of ``result`` gets a trace file."""
        if self.keep == "all" or result.unjudged or not result.passed:
            return True
        return self.keep == "sampled" and sampled(result.id, self.sample)


def sampled(case_id: str, share: float) -> bool:
    """Whether ``case_id`` is in the sample of about ``share`` of all ids: the same ids in every run."""
    digest = hashlib.blake2b(case_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") < share * 2**64


def write_trace(trace_dir: Path, case: Case, result: CaseResult, *, compress: bool = False) -> Path:
    """Write the trace of one case atomically (gzipped with ``compress``) and return its path."""
    data = trace_bytes(case, result)
    if compress:
        # mtime 0: the same run gives the same bytes. Level 6: most of level 9's saving at a third of its time.
        path = trace_dir / f"{safe_name(case.id)}.json.gz"
        atomic_write_bytes(path, gzip.compress(data, compresslevel=6, mtime=0))
    else:
        path = trace_dir / f"{safe_name(case.id)}.json"
        atomic_write_bytes(path, data)
    return path


def read_trace(path: Path) -> Trace:
    """Load a trace file, gzipped (``.gz``) or not."""
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    return Trace.model_validate_json(data)
