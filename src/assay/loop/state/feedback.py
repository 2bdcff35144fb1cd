"""The feedback part of loop state: what the next proposal and the next gate decision are given. The layer the
proposer works at (and whether a promotion is due), the history of decided generations (what a proposer derives
its own state from), the last gate's reasons, the attempt a gate asked to retry, and what the gate remembers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.evaluation.evaluator import EvalResult
from assay.history.records import CandidateRecord
from assay.loop.events import Decided, Event, LayerPromoted
from assay.loop.flags import counts_toward_layer, retried, screened_out
from assay.loop.layers import LayerTracker
from assay.loop.measure import Measurement, crashed
from assay.loop.state.lineage import Outcome


@dataclass
class HistoryItem:
    """One decided generation as the proposer's history shows it (``proposer``: who made it, ``operator``: what
    part of it; ``commit``, its mean dev ``score``, the ``best_score`` it was compared with and whether it
    ``crashed``: see :class:`~assay.proposers.base.HistoryEntry`)."""

    generation: int
    description: str
    decision: str
    parent: str | None = None
    delta: float | None = None
    proposer: str = ""
    operator: str = ""
    commit: str | None = None
    score: float | None = None
    best_score: float | None = None
    crashed: bool = False
    screened: bool = False
    sites: tuple[str, ...] = ()


@dataclass
class Retry:
    """A candidate the gate asked to try again: its dev results and the gate's numbers (score, best, needed)."""

    candidate_id: str
    dev: EvalResult | None
    score: float
    best_score: float
    needed: float


@dataclass
class ProposerFeedback:
    """What proposals and the gate are given (see the module docstring)."""

    tracker: LayerTracker = field(default_factory=LayerTracker)
    promotion_due: bool = False
    history: list[HistoryItem] = field(default_factory=list)
    last_gate: list[str] = field(default_factory=list)
    retry: Retry | None = None
    gate_state: dict[str, Any] = field(default_factory=dict)

    def apply(self, event: Event, outcome: Outcome | None) -> None:
        """Fold a candidate's ``decided`` event (given its outcome) and ``layer``."""
        match event:
            case Decided() if outcome is not None:
                if event.gate_state is not None:
                    self.gate_state = event.gate_state
                self._decided(outcome)
            case LayerPromoted():
                self.promotion_due = False

    def _decided(self, outcome: Outcome) -> None:
        record, measurement, kept = outcome.record, outcome.measurement, outcome.kept
        if counts_toward_layer(record.flags, record.proposer, kept) and self.tracker.record(kept):
            self.promotion_due = True
        pending = outcome.pending
        dev = measurement.dev if pending is not None else None
        self.history.append(
            HistoryItem(
                record.generation,
                record.description,
                record.decision,
                record.parent,
                record.delta,
                record.proposer,
                operator=record.operator,
                commit=record.commit,
                score=dev.mean_score if dev is not None else None,
                best_score=outcome.incumbent.dev.mean_score,
                crashed=dev is not None and crashed(dev),
                screened=screened_out(record.flags),
                sites=tuple(record.sites),
            )
        )
        self.retry = _retry(record, measurement) if retried(record.flags) else None
        if record.commit is None:
            self.last_gate = [record.description]
        elif kept:
            self.last_gate = []
        else:
            self.last_gate = [f"{name}: {d.detail}" for name, d in record.gate.items() if not d.passed]


def _retry(record: CandidateRecord, measurement: Measurement) -> Retry:
    progress = record.gate.get("progress")
    numbers = progress.numbers if progress else {}
    score = float(numbers.get("score", record.dev_score or 0.0))
    best = float(numbers.get("best_score", score - (record.delta or 0.0)))
    needed = float(numbers.get("min_delta", 0.0)) - (score - best)
    return Retry(record.candidate_id, measurement.dev, score, best, needed)
