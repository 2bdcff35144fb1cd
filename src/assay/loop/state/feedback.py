"""The feedback part of loop state: what the next proposal and the next gate decision are given. The layer the
proposer works at (and whether a promotion is due), the history of decided generations, the last gate's
reasons, the attempt a gate asked to retry, numeric tuning's trials, and what the gate remembers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.evaluation.evaluator import EvalResult
from assay.history.records import CandidateRecord
from assay.loop.events import Decided, Event, LayerPromoted
from assay.loop.flags import counts_toward_layer, retried
from assay.loop.layers import LayerTracker
from assay.loop.measure import Measurement, crashed
from assay.loop.state.lineage import Outcome
from assay.proposers.base import Trial

DISCARD_MARGIN = 1e-3


@dataclass
class HistoryItem:
    """One decided generation as the proposer's history shows it (``proposer``: who made it)."""

    generation: int
    description: str
    decision: str
    parent: str | None = None
    delta: float | None = None
    proposer: str = ""


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
    trials: list[Trial] = field(default_factory=list)
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
        point = pending.committed.proposal.point if pending is not None else None
        if point is not None and measurement.dev is not None:
            incumbent = outcome.incumbent.dev.mean_score
            self.trials.append(
                Trial(
                    point,
                    told_score(measurement.dev.mean_score, kept, incumbent),
                    record.commit or "",
                    unchanged=measurement.dev.mean_score == incumbent,
                    crashed=crashed(measurement.dev),
                )
            )
        self.history.append(
            HistoryItem(
                record.generation,
                record.description,
                record.decision,
                record.parent,
                record.delta,
                record.proposer,
            )
        )
        self.retry = _retry(record, measurement) if retried(record.flags) else None
        if record.commit is None:
            self.last_gate = [record.description]
        elif kept:
            self.last_gate = []
        else:
            self.last_gate = [f"{name}: {d.detail}" for name, d in record.gate.items() if not d.passed]


def told_score(score: float, kept: bool, incumbent: float) -> float:
    """The value numeric tuning is told for a trial: its mean dev score, or for a discarded one (the gate found
    a regression, a trade-off, a cost) no more than the best it failed to replace, a little less: a study must
    not climb towards values the gate will never keep."""
    return score if kept else min(score, incumbent) - DISCARD_MARGIN


def _retry(record: CandidateRecord, measurement: Measurement) -> Retry:
    progress = record.gate.get("progress")
    numbers = progress.numbers if progress else {}
    score = float(numbers.get("score", record.dev_score or 0.0))
    best = float(numbers.get("best_score", score - (record.delta or 0.0)))
    needed = float(numbers.get("min_delta", 0.0)) - (score - best)
    return Retry(record.candidate_id, measurement.dev, score, best, needed)
