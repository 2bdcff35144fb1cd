"""The watchers part of loop state: what the stop rules watch. Generations since the last keep, the kept dev
scores, the best's holdout scores at L3, the evaluated candidates' contents and failing-case sets (oscillation),
how long the best has failed each dev case (suspects), whether the search is exhausted, the errors of the
latest candidates that could not be proposed or evaluated, and the run's end."""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.evaluation.deadend import first_error
from assay.evaluation.evaluator import EvalResult
from assay.loop.announce import SUSPECT_AFTER
from assay.loop.events import Decided, Event, Finished, Verified
from assay.loop.flags import Flag, is_tuning
from assay.loop.measure import crashed
from assay.loop.state.lineage import Best, Lineage, Outcome


@dataclass
class Watchers:
    """What the stop rules watch (see the module docstring)."""

    since_keep: int = 0
    kept_scores: list[float] = field(default_factory=list)
    best_holdouts: list[float] = field(default_factory=list)
    content_hashes: list[str] = field(default_factory=list)
    failing_sets: list[frozenset[str]] = field(default_factory=list)
    failing_streak: dict[str, int] = field(default_factory=dict)
    search_exhausted: bool = False  # the last proposal found nothing new at any layer
    failed_in_a_row: list[str] = field(default_factory=list)  # why each of the latest candidates failed
    finished: Finished | None = None

    @property
    def suspects(self) -> list[str]:
        """Dev cases the best candidate has failed :data:`SUSPECT_AFTER` generations in a row or more."""
        return sorted(cid for cid, streak in self.failing_streak.items() if streak >= SUSPECT_AFTER)

    def apply(self, event: Event, lineage: Lineage, outcome: Outcome | None) -> None:
        """Fold a candidate's ``decided`` event (given its outcome), ``verified`` (read against the lineage's
        best, already folded) and ``finished``."""
        match event:
            case Decided() if outcome is not None:
                self._decided(outcome)
                self._track_failures(outcome, lineage.baseline)
            case Verified():
                best = lineage.best
                if (
                    event.holdout is not None
                    and best is not None
                    and best.record.candidate_id == event.candidate_id
                ):
                    self.best_holdouts.append(event.holdout.mean_score)
            case Finished():
                self.finished = event

    def _decided(self, outcome: Outcome) -> None:
        record, measurement, kept = outcome.record, outcome.measurement, outcome.kept
        self.since_keep = 0 if kept else self.since_keep + 1
        if kept and outcome.commit is not None:
            self.kept_scores.append(record.dev_score or 0.0)
            if measurement.holdout is not None:
                self.best_holdouts.append(measurement.holdout.mean_score)
        if outcome.commit is not None:
            self._track_trail(outcome)
            self._track_suspects(outcome.best)
        self.search_exhausted = Flag.NO_NEW_CANDIDATE in record.flags

    def _track_failures(self, outcome: Outcome, baseline: Best | None) -> None:
        """The latest candidates in a row that could not be proposed (no commit) or evaluated (L1 blocked them,
        or every case crashed while the baseline's did not): each one's error; any other decision ends the row.
        A baseline that crashes on every case is a target to evolve, so crashes then do not count."""
        failure = _failure(outcome, baseline)
        if failure is None:
            self.failed_in_a_row.clear()
        else:
            self.failed_in_a_row.append(failure)

    def _track_trail(self, outcome: Outcome) -> None:
        """What oscillation watches, for the evaluated candidates that ran (crashes and tuning trials are not
        oscillation): the artifact's content, and the failing-case set when it differs from the best's before
        the decision (a candidate that gains nothing is the plateau rule's business)."""
        dev, pending = outcome.measurement.dev, outcome.pending
        if crashed(dev):
            return
        if pending is not None and is_tuning(pending.committed.proposal.proposer):
            return  # a numeric study samples around the best by design; its trials never repeat a tree
        if pending is not None and pending.measured is not None and pending.measured.content:
            self.content_hashes.append(pending.measured.content)
        failing = _failing(dev)
        if failing is not None and failing != _failing(outcome.incumbent.measurement.dev):
            self.failing_sets.append(failing)

    def _track_suspects(self, best: Best) -> None:
        """A dev case the best candidate still fails, generation after generation, may be a wrong case."""
        dev = best.measurement.dev
        if dev is None:
            return
        for case in dev.cases:
            self.failing_streak[case.id] = 0 if case.passed else self.failing_streak.get(case.id, 0) + 1


def _failing(dev: EvalResult | None) -> frozenset[str] | None:
    return None if dev is None else frozenset(c.id for c in dev.cases if not c.passed)


def _failure(outcome: Outcome, baseline: Best | None) -> str | None:
    """Why ``outcome``'s candidate could not be proposed or evaluated, or None when it was."""
    record, measurement = outcome.record, outcome.measurement
    if Flag.SCREENED_BY_JUDGE in record.flags:
        return None  # judged, on purpose not run
    if outcome.commit is None:
        return None if Flag.NO_NEW_CANDIDATE in record.flags else record.description
    if measurement.blocked:
        return "; ".join(f"{name}: {d.detail}" for name, d in record.gate.items() if not d.passed) or (
            "the L1 static tier blocked it"
        )
    dev = measurement.dev
    if dev is None or not dev.cases or not crashed(dev):
        return None
    if baseline is not None and crashed(baseline.measurement.dev):
        return None
    return first_error(dev.cases[0])
