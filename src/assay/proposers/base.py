"""The proposer contract: what a proposer may see (``ProposerView``), what it returns (``Proposal``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from assay.registry import Registry


@dataclass
class RetryNote:
    """autocontext's retry context, after a gate asked to retry: the last attempt's score against the best's,
    the gain it still lacked, and how its failing dev cases failed (``{"id", "how"}``, redacted)."""

    score: float
    best_score: float
    needed: float
    failures: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ProposerView:
    """Everything a proposer may see — and nothing else. Every string in it has been through the Redactor
    except ``artifact``, the files the proposer edits, and the dev cases' own inputs and vars (see
    ``assay.proposers.context``).

    ``dev_cases``: ``{"id", "input"}`` or ``{"id", "vars"}`` of dev cases only; ``failures``: ``{"id", "how"}``
    per failing dev case; ``last_gate``: the gate's reasons for the last discard; ``history``:
    ``{"generation", "description", "decision"}``; ``trace_paths``: redacted trace copies of failing dev cases;
    ``retry``: the last attempt to try again from, when the gate asked for a retry.
    """

    artifact: dict[str, str]
    layer: int
    retry: RetryNote | None = None
    dev_cases: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    last_gate: list[str] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    trace_paths: list[str] = field(default_factory=list)


class Proposal(BaseModel):
    """The outcome of one proposal. ``ok=False`` with a one-line ``error`` is a recorded failed proposal
    (bad answer, failed apply, no edit), never an exception. ``citations`` are the trace paths cited."""

    ok: bool
    description: str
    error: str | None = None
    citations: list[str] = Field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0


class Proposer(ABC):
    """Proposes one change per call by editing files in ``worktree`` (editable paths are relative to it)."""

    name: ClassVar[str]

    @abstractmethod
    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        """Edit ``worktree`` and describe the change. ``editable`` holds paths or globs (``src/**/*.py``).
        Never raises for a bad answer: returns ``Proposal(ok=False, error=...)``."""


PROPOSERS: Registry[type[Proposer]] = Registry("proposer")
