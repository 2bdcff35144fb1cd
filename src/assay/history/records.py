"""Versioned records of a run, shared by the run store and the text files a run writes.

Every record carries ``schema_version``; readers accept older versions through :func:`upgrade` and ignore
fields they do not know, so a run directory written by an older assay still loads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from assay.model import Dimension, OverfitVerdict

SCHEMA_VERSION = 1

Decision = Literal["baseline", "keep", "discard", "invalid"]
RunStatus = Literal["running", "stopped", "finished", "failed"]


def now_iso() -> str:
    """The current UTC time as an ISO 8601 string with seconds precision (``2025-01-31T12:00:00+00:00``)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def candidate_id(number: int) -> str:
    """The id of the ``number``-th candidate of a run: ``candidate_id(7) == "cand-0007"``."""
    return f"cand-{number:04d}"


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """Bring a stored record (a plain dict) to the current schema version; records without one are version 1."""
    data = dict(data)
    data.setdefault("schema_version", 1)
    # Version 1 is the first; later versions add their migration steps here, oldest first.
    data["schema_version"] = SCHEMA_VERSION
    return data


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")

    schema_version: int = SCHEMA_VERSION

    @classmethod
    def load(cls, data: dict[str, Any]) -> Any:
        """Validate a stored dict of any known schema version into the current record type. A field that
        reads as None where None is not allowed (a column added after the row was written) takes its
        default."""
        data = upgrade(data)
        for name, info in cls.model_fields.items():
            if data.get(name, 0) is None and not info.is_required() and not _nullable(info.annotation):
                del data[name]
        return cls.model_validate(data)


def _nullable(annotation: Any) -> bool:
    return annotation is None or type(None) in get_args(annotation)


class CandidateRecord(_Record):
    """One candidate of a run and the decision taken on it: a row of results.tsv and a line of experiments.jsonl.

    ``gate`` holds each gate dimension's verdict and numbers; ``reason`` the decision in one line, naming the
    deciding dimension and its numbers (:mod:`assay.history.reasons`; empty in runs recorded before it);
    ``evidence`` the trace paths behind the decision; ``citations`` the traces a proposer said its change is based on; ``flags`` markers such as
    ``many-files``, ``scope-violation`` or ``overfitting`` (:class:`assay.loop.flags.Flag`, kept as strings);
    ``overfitting`` the overfitting rule's verdict once its holdout was measured (None before, and in runs
    recorded before verdicts were kept, whose flag was raised by a 0.15 gap between the pass rates).
    ``operator`` is what made the change (``py.guard``, ``tune``, ``llm.edit``), ``sites`` what it touched by name
    (``priority.py:priority#2``) and ``places`` where (``priority.py:12-14 (priority)``), all empty in runs
    recorded before them.
    """

    run_id: str
    generation: int
    candidate_id: str
    commit: str | None = None
    parent: str | None = None
    layer: int
    proposer: str
    operator: str = ""
    sites: list[str] = Field(default_factory=list)
    places: list[str] = Field(default_factory=list)
    description: str
    decision: Decision
    dev_score: float | None = None
    dev_pass_rate: float | None = None
    holdout_score: float | None = None
    regression_pass_rate: float | None = None
    delta: float | None = None
    tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    time: str = Field(default_factory=now_iso)
    gate: dict[str, Dimension] = Field(default_factory=dict)
    reason: str = ""
    regressions: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    citations: list[str] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)
    overfitting: OverfitVerdict | None = None

    @property
    def key(self) -> tuple[str, str]:
        """Identity of the record: writing a record with the same key again changes nothing."""
        return (self.run_id, self.candidate_id)


class EventRecord(_Record):
    """One entry of a run's append-only event log; ``seq`` numbers the events of a run from 1."""

    run_id: str
    seq: int
    time: str = Field(default_factory=now_iso)
    kind: str
    data: dict[str, Any] = Field(default_factory=dict)

    @property
    def key(self) -> tuple[str, int]:
        """Identity of the record: writing a record with the same key again changes nothing."""
        return (self.run_id, self.seq)


class RunRecord(_Record):
    """A run: its branch, the commit it started from, the user's branch and the resolved configuration.

    ``unsandboxed`` names what ran without the jail in any session of the run: ``runner`` (the candidates'
    cases) and ``proposer`` (an agent)."""

    run_id: str
    created: str = Field(default_factory=now_iso)
    status: RunStatus = "running"
    branch: str
    base_commit: str
    user_branch: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    stop_reason: str | None = None
    best: str | None = None
    unsandboxed: list[str] = Field(default_factory=list)


def best_candidate(records: Sequence[CandidateRecord], run: RunRecord | None = None) -> CandidateRecord:
    """The run's best candidate: the last one kept, or the baseline when none was; for a ``run`` that ended,
    the kept candidate it named as best (``evolve.final_pick: rating`` may name another than the last).

    The gate compares every candidate with the best so far and the run branch moves to each kept one, so the
    last kept candidate is the best; the loop, its summary and ``assay status/diff/adopt best`` all use this.
    """
    kept = [r for r in records if r.decision in ("baseline", "keep")]
    if not kept:
        raise ValueError("a run's records start with its baseline")
    if run is not None and run.best and run.status != "running":
        named = [r for r in kept if r.commit == run.best]
        if named:
            return named[-1]
    return kept[-1]


class EvaluationRow(_Record):
    """The result of one case of one split for one candidate, as kept by the run store."""

    split: str
    case_id: str
    passed: bool
    score: float
    trace_path: str | None = None


def paired_test_summary(gate: Mapping[str, Dimension], *, compact: bool = False) -> str:
    """The noise-aware gate's paired test on a candidate in a few words ("" when it did not judge it):
    decision, effect with its interval, p and the extra runs it took; ``compact`` for a table cell."""
    progress = gate.get("progress")
    numbers = progress.numbers if progress else {}
    if "p_better" not in numbers:
        return ""
    extra = numbers.get("extra_parent_runs", 0) + numbers.get("extra_candidate_runs", 0)
    low, high = numbers.get("ci", [0.0, 0.0])
    if compact:
        return (
            f"{numbers['decision']} {numbers['effect']:+.3f} [{low:+.3f},{high:+.3f}]"
            f" p={numbers['p_better']:.3g} +{extra} runs"
        )
    return (
        f"{numbers.get('decision', '')} effect {numbers.get('effect', 0.0):+.3f} [{low:+.3f}, {high:+.3f}]"
        f" p={numbers['p_better']:.3g}, {extra} extra runs"
    )
