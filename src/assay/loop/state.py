"""Loop state as a fold over the run's events: ``apply(state, event) -> state`` is the one way it changes,
live and on resume, so a resumed run continues exactly where the events end.

What the state holds: the generation count, the baseline and the best candidate with their measurements, the
measurements a non-greedy search may build on, the archive of candidates, the ratings, the noise runs, the
layer tracker, the histories the stop rules and the proposer read, what was spent and for how long the run has
been running, and the candidate of a generation that was committed but not yet decided.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.config import TournamentConfig
from assay.evaluation.evaluator import EvalResult
from assay.history.records import CandidateRecord
from assay.loop.events import (
    Committed,
    Decided,
    Dropped,
    Event,
    ExtraRuns,
    Finished,
    Interrupted,
    LayerPromoted,
    MatchesPlayed,
    Measured,
    NoiseMeasured,
    Picked,
    Proposed,
    Runs,
    Spend,
    Started,
    Verified,
)
from assay.loop.layers import LayerTracker
from assay.loop.measure import Measurement
from assay.loop.rating import Ratings
from assay.loop.report import SUSPECT_AFTER
from assay.proposers.base import Trial
from assay.search import Archive, Node
from assay.stats import NoiseEstimate, estimate_noise

DISCARD_MARGIN = 1e-3


@dataclass
class Best:
    """A kept candidate (or the baseline): its record, its measurement and its artifact size in bytes."""

    record: CandidateRecord
    measurement: Measurement
    size: int

    @property
    def commit(self) -> str:
        assert self.record.commit is not None, "a kept candidate has a commit"
        return self.record.commit

    @property
    def dev(self) -> EvalResult:
        return self.measurement.dev or EvalResult()


@dataclass
class Pending:
    """The candidate of the generation in progress: committed, maybe measured and matched, not yet decided."""

    committed: Committed
    screened: MatchesPlayed | None = None
    measured: Measured | None = None
    l3: Measured | None = None
    matches: MatchesPlayed | None = None

    @property
    def commit(self) -> str:
        assert self.committed.proposal.commit is not None
        return self.committed.proposal.commit

    def measurement(self) -> Measurement:
        measured, l3 = self.measured, self.l3
        return Measurement(
            static=measured.static if measured else None,
            dev=measured.dev if measured else None,
            holdout=l3.holdout if l3 else None,
            regression=l3.regression if l3 else None,
        )


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
class LoopState:
    """Everything the loop knows, folded from the events (see the module docstring)."""

    tracker: LayerTracker
    keep_all_measurements: bool = False
    tournament: TournamentConfig | None = None
    ratings: Ratings | None = None
    generation: int = 0
    sessions: int = 0
    records: list[CandidateRecord] = field(default_factory=list)
    baseline: Best | None = None
    best: Best | None = None
    measurements: dict[str, Measurement] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    archive: Archive = field(default_factory=Archive)
    noise: NoiseEstimate | None = None
    noise_spent: Spend = field(default_factory=Spend)
    runs: dict[str, Runs] = field(default_factory=dict)
    history: list[HistoryItem] = field(default_factory=list)
    last_gate: list[str] = field(default_factory=list)
    since_keep: int = 0
    kept_scores: list[float] = field(default_factory=list)
    best_holdouts: list[float] = field(default_factory=list)
    content_hashes: list[str] = field(default_factory=list)
    trees: set[str] = field(default_factory=set)  # fingerprints of every candidate proposed or measured
    trials: list[Trial] = field(default_factory=list)
    search_exhausted: bool = False  # the last proposal found nothing new at any layer
    failing_sets: list[frozenset[str]] = field(default_factory=list)
    failing_streak: dict[str, int] = field(default_factory=dict)
    spent: Spend = field(default_factory=Spend)
    elapsed: float = 0.0
    pending: Pending | None = None
    proposals: dict[int, Proposed] = field(default_factory=dict)
    last_proposal: int = 0
    promotion_due: bool = False
    gate_state: dict[str, Any] = field(default_factory=dict)
    best_tournament_score: float = 0.5  # the best's mean match score (the baseline plays even with itself)
    retry: Retry | None = None
    finished: Finished | None = None

    @property
    def best_pass_rate(self) -> float:
        return self.best.dev.pass_rate if self.best else 0.0

    @property
    def layers_exhausted(self) -> bool:
        return self.tracker.exhausted

    @property
    def suspects(self) -> list[str]:
        """Dev cases the best candidate has failed :data:`SUSPECT_AFTER` generations in a row or more."""
        return sorted(cid for cid, streak in self.failing_streak.items() if streak >= SUSPECT_AFTER)

    def measurement(self, commit: str) -> Measurement | None:
        """What is known of ``commit``: the best's, the baseline's, or a kept measurement of a candidate."""
        for known in (self.best, self.baseline):
            if known is not None and known.record.commit == commit:
                return known.measurement
        return self.measurements.get(commit)


def apply(state: LoopState, event: Event) -> LoopState:
    """Fold one event into ``state`` (changed in place and returned)."""
    state.spent = state.spent + event.spent
    state.elapsed = max(state.elapsed, event.elapsed)
    match event:
        case Started():
            state.sessions += 1
        case Measured():
            if event.tree:
                state.trees.add(event.tree)
            _measured(state, event)
        case NoiseMeasured():
            state.runs[event.commit] = {k: list(v) for k, v in event.runs.items()}
            state.noise = estimate_noise(state.runs[event.commit])
            state.noise_spent = event.spent
        case Committed():
            state.pending = Pending(event)
            proposal = event.proposal
            if proposal.tree:
                state.trees.add(proposal.tree)
            if proposal.number is not None:
                state.proposals.pop(proposal.number, None)
            if event.sampled:
                state.archive.record_choice(proposal.parent)
        case Proposed():
            # The parent's visit counts when the proposal is taken (committed or decided), in generation
            # order, so the archive a later proposal samples from does not depend on the pipeline's timing.
            state.proposals[event.number] = event
            state.last_proposal = max(state.last_proposal, event.number)
            if event.proposal.tree:
                state.trees.add(event.proposal.tree)
        case Dropped():
            for number in event.numbers:
                state.proposals.pop(number, None)
        case MatchesPlayed():
            if state.pending is not None and event.stage == "screen":
                state.pending.screened = event
            elif state.pending is not None:
                state.pending.matches = event
            if state.ratings is not None:
                pending = state.pending
                dev = pending.measured.dev if pending and pending.measured else None
                state.ratings.apply(event, dev)
        case Decided():
            if event.record.decision == "baseline":
                _baseline(state, event.record)
            else:
                if event.proposal is not None:
                    state.proposals.pop(event.proposal, None)
                if event.sampled and event.record.parent is not None:
                    state.archive.record_choice(event.record.parent)
                if event.gate_state is not None:
                    state.gate_state = event.gate_state
                _decided(state, event.record, event.extra_runs)
        case Verified():
            _verified(state, event)
        case Picked():
            _picked(state, event)
        case LayerPromoted():
            state.promotion_due = False
        case Interrupted():
            pass
        case Finished():
            state.finished = event
    return state


def fold(state: LoopState, events: list[Event]) -> LoopState:
    """Apply every event in order."""
    for event in events:
        apply(state, event)
    return state


def _measured(state: LoopState, event: Measured) -> None:
    pending = state.pending
    if (
        pending is not None
        and pending.committed.generation == event.generation
        and pending.commit == event.commit
    ):
        if event.tier == "L2":
            pending.measured = event
        else:
            pending.l3 = event
    if event.tier == "L2":
        state.sizes[event.commit] = event.size
        state.measurements[event.commit] = Measurement(static=event.static, dev=event.dev)
    else:
        known = state.measurements.setdefault(event.commit, Measurement())
        known.holdout, known.regression = event.holdout, event.regression


def _baseline(state: LoopState, record: CandidateRecord) -> None:
    commit = record.commit or ""
    measurement = state.measurements.get(commit, Measurement())
    best = Best(record, measurement, state.sizes.get(commit, 0))
    state.records.append(record)
    state.baseline = best
    state.best = Best(record, measurement, best.size)
    state.archive = Archive([Node(commit, None, _unit(record.dev_score))])
    if state.tournament is not None:
        state.ratings = Ratings.start(state.tournament, record.candidate_id, measurement.dev, commit)
        state.ratings.rank_archive(state.archive)


def _decided(state: LoopState, record: CandidateRecord, extra: ExtraRuns) -> None:
    pending, state.pending = state.pending, None
    state.records.append(record)
    state.generation = record.generation
    kept = record.decision == "keep"
    measurement = pending.measurement() if pending is not None else Measurement()
    commit = record.commit
    screened_out = pending is not None and pending.measured is not None and pending.measured.screened_out
    if commit is not None and measurement.dev is not None and not screened_out:
        parent = (
            record.parent if record.parent and record.parent in state.archive else state.archive.nodes()[0].id
        )
        state.archive.add(Node(commit, parent, _unit(measurement.dev.mean_score)))
        state.archive.record_child(parent)
        if state.ratings is not None:
            state.ratings.rank_archive(state.archive)
    _settle_runs(state, extra, commit if kept else None, measurement.dev)
    # A gate's "retry" asks for another try from the same parent, and numeric tuning is no layer's edit: a
    # discard of either does not count toward the layer.
    counts = "gate-retry" not in record.flags and (kept or record.proposer != "tune")
    if counts and state.tracker.record(kept):
        state.promotion_due = True
    state.since_keep = 0 if kept else state.since_keep + 1
    assert state.best is not None, "the baseline is decided first"
    best_failing = _failing(state.best.measurement.dev)
    incumbent = state.best.dev.mean_score
    if kept and commit is not None:
        state.kept_scores.append(record.dev_score or 0.0)
        if pending is not None and pending.matches is not None:
            state.best_tournament_score = pending.matches.score
        state.best = Best(record, measurement, state.sizes.get(commit, 0))
        if measurement.holdout is not None:
            state.best_holdouts.append(measurement.holdout.mean_score)
    if commit is not None:
        _track_trail(state, pending, measurement, best_failing)
        _track_suspects(state)
    point = pending.committed.proposal.point if pending is not None else None
    if point is not None and measurement.dev is not None:
        state.trials.append(
            Trial(
                point,
                told_score(measurement.dev.mean_score, kept, incumbent),
                record.commit or "",
                unchanged=measurement.dev.mean_score == incumbent,
                crashed=crashed(measurement.dev),
            )
        )
    state.search_exhausted = "no-new-candidate" in record.flags
    state.history.append(
        HistoryItem(
            record.generation,
            record.description,
            record.decision,
            record.parent,
            record.delta,
            record.proposer,
        )
    )
    state.retry = _retry(record, measurement) if "gate-retry" in record.flags else None
    if commit is None:
        state.last_gate = [record.description]
    elif kept:
        state.last_gate = []
    else:
        state.last_gate = [f"{name}: {d.detail}" for name, d in record.gate.items() if not d.passed]
    if commit is not None and not kept and not state.keep_all_measurements:
        state.measurements.pop(commit, None)
    elif commit is not None:
        state.measurements[commit] = measurement


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


def _settle_runs(state: LoopState, extra: ExtraRuns, kept: str | None, dev: EvalResult | None) -> None:
    """The paired gate's runs: the parent keeps its new runs; a kept candidate keeps all of its own."""
    if not extra.parent:
        return
    parent_dev = state.measurement(extra.parent)
    known = state.runs.setdefault(
        extra.parent, verdicts(parent_dev.dev if parent_dev and parent_dev.dev else None)
    )
    for cid, runs in extra.on_parent.items():
        known.setdefault(cid, []).extend(runs)
    if kept is not None and dev is not None:
        mine = verdicts(dev)
        for cid, runs in extra.on_candidate.items():
            mine.setdefault(cid, []).extend(runs)
        state.runs[kept] = mine


def verdicts(result: EvalResult | None) -> Runs:
    """One run per case: 1.0 for a pass, 0.0 for a failure."""
    return {c.id: [1.0 if c.passed else 0.0] for c in (result.cases if result else [])}


def _failing(dev: EvalResult | None) -> frozenset[str] | None:
    return None if dev is None else frozenset(c.id for c in dev.cases if not c.passed)


def crashed(dev: EvalResult | None) -> bool:
    """Not evaluated (L1 stopped it), or every case crashed, timed out or printed nothing."""
    return dev is None or all(not c.output.ok or not c.output.text.strip() for c in dev.cases)


def _track_trail(
    state: LoopState, pending: Pending | None, measurement: Measurement, best_failing: frozenset[str] | None
) -> None:
    """What oscillation watches, for the evaluated candidates that ran (crashes and tuning trials are not
    oscillation): the artifact's content, and the failing-case set when it differs from the best's before the
    decision (a candidate that gains nothing is the plateau rule's business)."""
    if crashed(measurement.dev):
        return
    if pending is not None and pending.committed.proposal.proposer == "tune":
        return  # a numeric study samples around the best by design; its trials never repeat a tree
    if pending is not None and pending.measured is not None and pending.measured.content:
        state.content_hashes.append(pending.measured.content)
    failing = _failing(measurement.dev)
    if failing is not None and failing != best_failing:
        state.failing_sets.append(failing)


def _track_suspects(state: LoopState) -> None:
    """A dev case the best candidate still fails, generation after generation, may be a wrong case."""
    assert state.best is not None
    dev = state.best.measurement.dev
    if dev is None:
        return
    for case in dev.cases:
        state.failing_streak[case.id] = 0 if case.passed else state.failing_streak.get(case.id, 0) + 1


def _verified(state: LoopState, event: Verified) -> None:
    scores = {
        "holdout_score": event.holdout.mean_score if event.holdout else None,
        "regression_pass_rate": event.regression.pass_rate if event.regression else None,
    }
    for index, record in enumerate(state.records):
        if record.candidate_id == event.candidate_id:
            state.records[index] = record.model_copy(update=scores)
    for holder in (state.best, state.baseline):
        if holder is not None and holder.record.candidate_id == event.candidate_id:
            holder.measurement.holdout = event.holdout
            holder.measurement.regression = event.regression
            holder.record = holder.record.model_copy(update=scores)
    if (
        event.holdout is not None
        and state.best is not None
        and state.best.record.candidate_id == event.candidate_id
    ):
        state.best_holdouts.append(event.holdout.mean_score)


def _picked(state: LoopState, event: Picked) -> None:
    record = next(r for r in state.records if r.candidate_id == event.candidate_id)
    measurement = state.measurement(event.commit)
    assert measurement is not None, "only kept candidates are picked, and their measurements are kept"
    state.best = Best(record, measurement, state.sizes.get(event.commit, 0))


def top_rated_kept(state: LoopState) -> tuple[CandidateRecord, float] | None:
    """The kept candidate (or the baseline) with the highest tournament rating, and that rating."""
    if state.ratings is None:
        return None
    rated = state.ratings.backend.ratings()
    kept = [
        r
        for r in state.records
        if r.decision in ("baseline", "keep") and r.commit and r.candidate_id in rated
    ]
    if not kept:
        return None
    top = max(kept, key=lambda r: (rated[r.candidate_id].rating, r.generation))
    return top, rated[top.candidate_id].rating


def _unit(score: float | None) -> float:
    return min(1.0, max(0.0, score or 0.0))
