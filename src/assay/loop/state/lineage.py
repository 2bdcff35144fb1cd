"""The lineage part of loop state: the candidates and what is known of them. The generation count, every
decided record, the baseline and the best with their measurements, the measurements a non-greedy search may
build on, the artifact sizes, the archive of candidates with their tournament ratings, and the candidate of the
generation in progress (committed, not yet decided).

The lineage folds first: a candidate's ``decided`` event gives an :class:`Outcome`, what the decision did, from
which the other parts fold it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.config import TournamentConfig
from assay.evaluation.evaluator import EvalResult
from assay.history.records import CandidateRecord
from assay.loop.events import (
    Committed,
    Decided,
    Event,
    ExtraRuns,
    MatchesPlayed,
    Measured,
    Picked,
    Trimmed,
    Verified,
)
from assay.loop.flags import Flag
from assay.loop.measure import Measurement
from assay.loop.rating import Ratings
from assay.ratings import RatingBackendProtocol
from assay.search import Archive, Node


@dataclass(frozen=True)
class Size:
    """An artifact's size in bytes, and the size of what it says (comments and formatting aside; 0 when a run
    recorded before it was measured)."""

    bytes: int = 0
    content: int = 0


def compared(before: Size, after: Size) -> tuple[int, int, str]:
    """Two artifacts' sizes as a gate or a summary compares them, and their unit: the content's characters when
    both are known (a comment deleted makes nothing smaller), else bytes."""
    if before.content and after.content:
        return before.content, after.content, "characters of content"
    return before.bytes, after.bytes, "bytes"


@dataclass
class Best:
    """A kept candidate (or the baseline): its record, its measurement and its artifact's size."""

    record: CandidateRecord
    measurement: Measurement
    size: Size

    @property
    def commit(self) -> str:
        assert self.record.commit is not None, "a kept candidate has a commit"
        return self.record.commit

    @property
    def dev(self) -> EvalResult:
        return self.measurement.dev or EvalResult()


@dataclass
class Pending:
    """The candidate of the generation in progress: committed, maybe measured, matched and trimmed (then its
    proposal and measurement are those of the candidate without its inert sites), not yet decided."""

    committed: Committed
    screened: MatchesPlayed | None = None
    measured: Measured | None = None
    l3: Measured | None = None
    matches: MatchesPlayed | None = None
    trimmed: Trimmed | None = None

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


@dataclass(frozen=True)
class Outcome:
    """What the decision on a candidate (not the baseline) did to the lineage: its record, the generation's
    candidate it decided (None for a proposal that made no commit) with its measurement, the best it was judged
    against (``incumbent``) and the best after it, and what was known of the parent the paired gate ran again."""

    record: CandidateRecord
    pending: Pending | None
    measurement: Measurement
    incumbent: Best
    best: Best
    rerun_parent: Measurement | None = None

    @property
    def kept(self) -> bool:
        return self.record.decision == "keep"

    @property
    def commit(self) -> str | None:
        return self.record.commit


@dataclass
class Lineage:
    """The candidates of the run (see the module docstring)."""

    keep_all_measurements: bool = False  # a non-greedy search may build on a discarded candidate
    tournament: TournamentConfig | None = None
    rating_backend: RatingBackendProtocol | str | None = None  # the backend given, instead of the configured
    ratings: Ratings | None = None
    generation: int = 0
    records: list[CandidateRecord] = field(default_factory=list)
    baseline: Best | None = None
    best: Best | None = None
    best_tournament_score: float = 0.5  # the best's mean match score (the baseline plays even with itself)
    measurements: dict[str, Measurement] = field(default_factory=dict)
    sizes: dict[str, Size] = field(default_factory=dict)
    archive: Archive = field(default_factory=Archive)
    pending: Pending | None = None
    # The latest decision: the record, the measurement it was decided on and the matches played before it.
    decided: tuple[CandidateRecord, Measurement, MatchesPlayed | None] | None = None

    def measurement(self, commit: str) -> Measurement | None:
        """What is known of ``commit``: the best's, the baseline's, or a kept measurement of a candidate."""
        for known in (self.best, self.baseline):
            if known is not None and known.record.commit == commit:
                return known.measurement
        return self.measurements.get(commit)

    def top_rated_kept(self) -> tuple[CandidateRecord, float] | None:
        """The kept candidate (or the baseline) with the highest tournament rating, and that rating."""
        if self.ratings is None:
            return None
        rated = self.ratings.backend.ratings()
        kept = [
            r
            for r in self.records
            if r.decision in ("baseline", "keep") and r.commit and r.candidate_id in rated
        ]
        if not kept:
            return None
        top = max(kept, key=lambda r: (rated[r.candidate_id].rating, r.generation))
        return top, rated[top.candidate_id].rating

    def apply(self, event: Event) -> Outcome | None:
        """Fold the events about candidates: ``measured``, ``committed``, ``trimmed``, ``matches``, ``decided``,
        ``verified``, ``picked``. The outcome of a candidate's decision is returned (None for other events)."""
        match event:
            case Measured():
                self._measured(event)
            case Committed():
                self.pending = Pending(event)
                if event.sampled:
                    # The parent's visit counts when its proposal is taken (committed or decided), in generation
                    # order, so the archive a later proposal samples from does not hang on the pipeline's timing.
                    self.archive.record_choice(event.proposal.parent)
            case Trimmed() if self.pending is not None:
                self.pending.trimmed = event
                if event.proposal is not None and event.measured is not None:
                    self.pending.committed = self.pending.committed.model_copy(
                        update={"proposal": event.proposal}
                    )
                    self._measured(event.measured)
            case MatchesPlayed():
                self._matches(event)
            case Decided() if event.record.decision == "baseline":
                self._baseline(event.record)
            case Decided():
                if event.sampled and event.record.parent is not None:
                    self.archive.record_choice(event.record.parent)
                return self._decided(event.record, event.extra_runs)
            case Verified():
                self._verified(event)
            case Picked():
                self._picked(event)
        return None

    def _measured(self, event: Measured) -> None:
        pending = self.pending
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
            self.sizes[event.commit] = Size(event.size, event.content_size)
            self.measurements[event.commit] = Measurement(static=event.static, dev=event.dev)
        else:
            known = self.measurements.setdefault(event.commit, Measurement())
            known.holdout, known.regression = event.holdout, event.regression

    def _matches(self, event: MatchesPlayed) -> None:
        pending = self.pending
        if pending is not None and event.stage == "screen":
            pending.screened = event
        elif pending is not None:
            pending.matches = event
        if self.ratings is not None:
            dev = pending.measured.dev if pending and pending.measured else None
            self.ratings.apply(event, dev)

    def _baseline(self, record: CandidateRecord) -> None:
        commit = record.commit or ""
        measurement = self.measurements.get(commit, Measurement())
        size = self.sizes.get(commit, Size())
        self.records.append(record)
        self.decided = (record, measurement, None)
        self.baseline = Best(record, measurement, size)
        self.best = Best(record, measurement, size)
        self.archive = Archive([Node(commit, None, _unit(record.dev_score))])
        if self.tournament is not None:
            self.ratings = Ratings.start(
                self.tournament, record.candidate_id, measurement.dev, commit, backend=self.rating_backend
            )
            self.ratings.rank_archive(self.archive)

    def _decided(self, record: CandidateRecord, extra: ExtraRuns) -> Outcome:
        pending, self.pending = self.pending, None
        rerun_parent = self.measurement(extra.parent) if extra.parent else None
        self.records.append(record)
        self.generation = record.generation
        kept = record.decision == "keep"
        measurement = pending.measurement() if pending is not None else Measurement()
        self.decided = (record, measurement, pending.matches if pending is not None else None)
        commit = record.commit
        screened_out = pending is not None and pending.measured is not None and pending.measured.screened_out
        # SIFT keeps a node the judge ranked but nobody evaluated: it inherits its parent's accuracy (and so
        # its accuracy rank) and carries its own rating rank, so ranked search may still expand it.
        judged_only = Flag.SCREENED_BY_JUDGE in record.flags
        if commit is not None and (judged_only or (measurement.dev is not None and not screened_out)):
            parent = (
                record.parent
                if record.parent and record.parent in self.archive
                else self.archive.nodes()[0].id
            )
            accuracy = None if judged_only or measurement.dev is None else _unit(measurement.dev.mean_score)
            self.archive.add(Node(commit, parent, accuracy))
            self.archive.record_child(parent)
            if self.ratings is not None:
                self.ratings.rank_archive(self.archive)
        assert self.best is not None, "the baseline is decided first"
        incumbent = self.best
        if kept and commit is not None:
            if pending is not None and pending.matches is not None:
                self.best_tournament_score = pending.matches.score
            self.best = Best(record, measurement, self.sizes.get(commit, Size()))
        if commit is not None and not kept and not self.keep_all_measurements:
            self.measurements.pop(commit, None)
        elif commit is not None:
            self.measurements[commit] = measurement
        return Outcome(record, pending, measurement, incumbent, self.best, rerun_parent)

    def _verified(self, event: Verified) -> None:
        for index, record in enumerate(self.records):
            if record.candidate_id == event.candidate_id:
                self.records[index] = event.update(record)
        for holder in (self.best, self.baseline):
            if holder is not None and holder.record.candidate_id == event.candidate_id:
                holder.measurement.holdout = event.holdout
                holder.measurement.regression = event.regression
                holder.record = event.update(holder.record)

    def _picked(self, event: Picked) -> None:
        record = next(r for r in self.records if r.candidate_id == event.candidate_id)
        measurement = self.measurement(event.commit)
        assert measurement is not None, "only kept candidates are picked, and their measurements are kept"
        self.best = Best(record, measurement, self.sizes.get(event.commit, Size()))


def _unit(score: float | None) -> float:
    return min(1.0, max(0.0, score or 0.0))
