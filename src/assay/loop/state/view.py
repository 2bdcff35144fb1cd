"""A read-only view of a run: what stop rules' ``check`` receives and what code outside the loop may read
(:meth:`assay.loop.engine.Evolution.view`), never the loop's state itself.

Every field is a value or a tuple, and the views are frozen: code that tries to change the run through its view
fails (``FrozenInstanceError``, or ``AttributeError`` on a tuple's ``append``), and the run goes on as its events
say.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from assay.history.records import CandidateRecord
from assay.loop.events import Finished, MatchesPlayed, ProposalMade, Spend
from assay.loop.measure import Measurement

if TYPE_CHECKING:
    from assay.loop.state import LoopState
    from assay.loop.state.lineage import Lineage


@dataclass(frozen=True)
class CandidateView:
    """One decided candidate (or the baseline) as its record says: ids, decision, scores, costs and flags."""

    candidate_id: str
    generation: int
    commit: str | None
    parent: str | None
    layer: int
    proposer: str
    description: str
    decision: str
    dev_score: float | None = None
    dev_pass_rate: float | None = None
    holdout_score: float | None = None
    regression_pass_rate: float | None = None
    delta: float | None = None
    tokens: int = 0
    cost_usd: float = 0.0
    flags: tuple[str, ...] = ()

    @classmethod
    def of(cls, record: CandidateRecord) -> CandidateView:
        return cls(
            candidate_id=record.candidate_id,
            generation=record.generation,
            commit=record.commit,
            parent=record.parent,
            layer=record.layer,
            proposer=record.proposer,
            description=record.description,
            decision=record.decision,
            dev_score=record.dev_score,
            dev_pass_rate=record.dev_pass_rate,
            holdout_score=record.holdout_score,
            regression_pass_rate=record.regression_pass_rate,
            delta=record.delta,
            tokens=record.tokens,
            cost_usd=record.cost_usd,
            flags=tuple(record.flags),
        )


@dataclass(frozen=True)
class DecisionView:
    """The latest decision: the candidate's record (the baseline's too), its measurement as it stood then, and
    the tournament matches it played before it."""

    record: CandidateRecord
    measurement: Measurement
    matches: MatchesPlayed | None = None


@dataclass(frozen=True)
class PendingView:
    """The candidate of the generation in progress: proposed and committed, perhaps measured, not decided."""

    generation: int
    proposal: ProposalMade
    measurement: Measurement
    matches: MatchesPlayed | None = None


@dataclass(frozen=True)
class RatingRow:
    """One rated candidate of the tournament: its id, rating and uncertainty."""

    candidate_id: str
    rating: float
    uncertainty: float


@dataclass(frozen=True)
class RunView:
    """The run as its events have made it so far, frozen.

    - ``generation``: the last decided generation (0: only the baseline, or nothing yet); ``sessions``: how
      many times the run was started or resumed; ``spent`` (case runs, tokens, cost, judge calls) and
      ``elapsed`` (seconds the run has been running, sessions before a resume included).
    - ``baseline``, ``best`` and ``last`` (the latest decided candidate): None until the baseline is decided;
      ``best_pass_rate``: the best's dev pass rate (0.0 before there is a best).
    - ``layer``: the layer proposals are made at; ``layers_exhausted``: the last layer ran out of discards.
    - What the built-in stop rules watch: ``since_keep`` (generations since the last keep), ``kept_scores`` (the
      dev score of each kept candidate), ``best_holdouts`` (the best's holdout score at each L3 check),
      ``content_hashes`` and ``failing_sets`` (each evaluated candidate's content and failing dev cases, for
      oscillation), ``suspects`` (dev cases the best has failed generation after generation) and
      ``search_exhausted`` (the last proposal found nothing new at any layer), ``failed_in_a_row`` (why each of
      the latest candidates in a row could not be proposed or evaluated).
    - What a report of the run reads besides: ``decided`` (the latest decision with its measurement),
      ``pending`` (the candidate not yet decided), ``best_measurement``, ``leaderboard`` (the tournament's
      ratings, highest first), ``flaky`` and ``noise_summary`` (what the baseline's repeated runs showed) and
      ``finished`` (the run's end, once it has one).
    """

    generation: int = 0
    sessions: int = 0
    spent: Spend = field(default_factory=Spend)
    elapsed: float = 0.0
    baseline: CandidateView | None = None
    best: CandidateView | None = None
    last: CandidateView | None = None
    best_pass_rate: float = 0.0
    layer: int = 1
    layers_exhausted: bool = False
    since_keep: int = 0
    kept_scores: tuple[float, ...] = ()
    best_holdouts: tuple[float, ...] = ()
    content_hashes: tuple[str, ...] = ()
    failing_sets: tuple[frozenset[str], ...] = ()
    suspects: tuple[str, ...] = ()
    search_exhausted: bool = False
    failed_in_a_row: tuple[str, ...] = ()
    # What a report reads: results as the events recorded them (read them, never change them); left out of the
    # view's equality and hash, which the values above decide.
    decided: DecisionView | None = field(default=None, compare=False)
    pending: PendingView | None = field(default=None, compare=False)
    best_measurement: Measurement | None = field(default=None, compare=False)
    leaderboard: tuple[RatingRow, ...] = ()
    flaky: tuple[str, ...] = ()
    noise_summary: str = ""
    finished: Finished | None = field(default=None, compare=False)

    @classmethod
    def of(cls, state: LoopState) -> RunView:
        """The view of ``state`` now (a copy: later events do not change it)."""
        lineage, spend, watchers, tracker = state.lineage, state.spend, state.watchers, state.feedback.tracker
        best, baseline = lineage.best, lineage.baseline
        return cls(
            generation=lineage.generation,
            sessions=spend.sessions,
            spent=spend.spent,
            elapsed=spend.elapsed,
            baseline=CandidateView.of(baseline.record) if baseline else None,
            best=CandidateView.of(best.record) if best else None,
            last=CandidateView.of(lineage.records[-1]) if lineage.records else None,
            best_pass_rate=best.dev.pass_rate if best else 0.0,
            layer=tracker.current,
            layers_exhausted=tracker.exhausted,
            since_keep=watchers.since_keep,
            kept_scores=tuple(watchers.kept_scores),
            best_holdouts=tuple(watchers.best_holdouts),
            content_hashes=tuple(watchers.content_hashes),
            failing_sets=tuple(watchers.failing_sets),
            suspects=tuple(watchers.suspects),
            search_exhausted=watchers.search_exhausted,
            failed_in_a_row=tuple(watchers.failed_in_a_row),
            decided=_decided(lineage),
            pending=_pending(lineage),
            best_measurement=replace(best.measurement) if best else None,
            leaderboard=_leaderboard(lineage),
            flaky=tuple(spend.noise.flaky) if spend.noise else (),
            noise_summary=spend.noise.summary() if spend.noise else "",
            finished=watchers.finished,
        )


def _decided(lineage: Lineage) -> DecisionView | None:
    if lineage.decided is None:
        return None
    record, measurement, matches = lineage.decided
    return DecisionView(record.model_copy(), replace(measurement), matches)


def _pending(lineage: Lineage) -> PendingView | None:
    pending = lineage.pending
    if pending is None:
        return None
    committed = pending.committed
    return PendingView(committed.generation, committed.proposal, pending.measurement(), pending.matches)


def _leaderboard(lineage: Lineage) -> tuple[RatingRow, ...]:
    if lineage.ratings is None:
        return ()
    rated = lineage.ratings.backend.ratings()
    rows = (RatingRow(cid, r.rating, r.uncertainty) for cid, r in rated.items())
    return tuple(sorted(rows, key=lambda row: -row.rating))
