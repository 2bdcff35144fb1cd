"""What numeric tuning knows of a run, derived from the view alone: every evaluated candidate as a trial (its
program structure, the values of its tunable numbers and the score the study is told), and the best other
structures evaluated so far, whose numbers may be tuned too.

Nothing here is written by the loop onto a proposer: the trials come from ``view.history`` (folded from the
run's events) and the files of its commits (``view.artifact_at``), so a resumed run, or a proposal made ahead
from an earlier decision, derives the same evidence as the uninterrupted run. Points are remembered by commit
(a commit's files never change), which only saves work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from assay.config import ParameterSpec
from assay.proposers.base import ProposerView, TunedPoint
from assay.proposers.tune.space import search_space

DISCARD_MARGIN = 1e-3
STRUCTURES_SHOWN = 4


@dataclass(frozen=True)
class Trial:
    """An evaluated candidate as numeric tuning sees it: its point, its mean dev score (as told to the study)
    and its commit; ``unchanged`` when its measured dev score was exactly the incumbent's (nothing it changed
    made a measurable difference); ``crashed`` when it was not evaluated or no dev case of it ran."""

    point: TunedPoint
    score: float
    commit: str = ""
    unchanged: bool = False
    crashed: bool = False


@dataclass
class Structure:
    """An evaluated program structure other than the parent's, offered for tuning: the files of its best
    candidate (its ``study``'s best ``score``, over ``trials`` evaluations); ``latest`` when the last evaluated
    candidate was of this structure; ``inert`` when every one of its trials was ``unchanged``, ``crashed`` when
    every one ``crashed``."""

    study: str
    files: dict[str, str]
    score: float
    trials: int
    latest: bool = False
    inert: bool = False
    crashed: bool = False


@dataclass
class Evidence:
    """The trials of a run, the parent's first, and the other structures worth tuning."""

    trials: list[Trial] = field(default_factory=list)
    structures: list[Structure] = field(default_factory=list)

    @property
    def parent_score(self) -> float | None:
        return self.trials[0].score if self.trials else None


def told_score(score: float, kept: bool, incumbent: float) -> float:
    """The value numeric tuning is told for a trial: its mean dev score, or for a discarded one (the gate found
    a regression, a trade-off, a cost) no more than the best it failed to replace, a little less: a study must
    not climb towards values the gate will never keep."""
    return score if kept else min(score, incumbent) - DISCARD_MARGIN


class EvidenceReader:
    """Derives the :class:`Evidence` of a view (see the module docstring), remembering each commit's point."""

    def __init__(self, parameters: Mapping[str, ParameterSpec] | None = None) -> None:
        self.parameters = dict(parameters or {})
        self._points: dict[str, TunedPoint] = {}

    def point(self, files: Mapping[str, str]) -> TunedPoint:
        return search_space(dict(files), self.parameters).point()

    def of(self, view: ProposerView) -> Evidence:
        """The trials of every measured candidate of ``view.history`` (the parent's first) and the best other
        structures (:func:`structures`)."""
        trials: list[Trial] = []
        for entry in view.history:
            if not entry.commit or entry.score is None:
                continue
            incumbent = entry.best_score if entry.best_score is not None else entry.score
            trials.append(
                Trial(
                    self._commit_point(view, entry.commit),
                    told_score(entry.score, entry.decision == "keep", incumbent),
                    entry.commit,
                    unchanged=entry.score == incumbent,
                    crashed=entry.crashed,
                )
            )
        own = self.point(view.artifact)
        here = [Trial(own, view.parent_score, view.parent)] if view.parent_score is not None else []
        return Evidence(here + trials, structures(trials, own.study, view.artifact_at))

    def _commit_point(self, view: ProposerView, commit: str) -> TunedPoint:
        known = self._points.get(commit)
        if known is None:
            known = self._points[commit] = self.point(view.artifact_at(commit))
        return known


def structures(
    trials: list[Trial], own: str, files_at: Callable[[str], dict[str, str]], count: int = STRUCTURES_SHOWN
) -> list[Structure]:
    """The ``count`` best-scoring program structures evaluated so far other than ``own`` (the parent's), and the
    latest evaluated one (a structural edit's first values may score low), with the files of each one's best
    candidate (``files_at(commit)``). A structure none of whose trials measured differently from the incumbent
    comes after every other one: its score, a discard's told just below the incumbent's, is the best any discard
    can have, so a run's inert edits (a guard that never fires) would otherwise crowd out every structure that
    made a difference. For the same reason a structure's best candidate is its best one that measured
    differently from the incumbent, when it has one: a guard whose numbers were once tuned to where it never
    fires would otherwise be offered at those numbers, and tuned near them, ahead of every structure that made a
    difference."""
    best: dict[str, Trial] = {}
    counts: dict[str, int] = {}
    inert: dict[str, bool] = {}
    failed: dict[str, bool] = {}
    for trial in trials:
        study = trial.point.study
        counts[study] = counts.get(study, 0) + 1
        inert[study] = inert.get(study, True) and trial.unchanged
        failed[study] = failed.get(study, True) and trial.crashed
        if trial.point.values and trial.commit and (study not in best or _better(trial, best[study])):
            best[study] = trial
    others = [t for s, t in best.items() if s != own]
    ranked = sorted(others, key=lambda t: (inert[t.point.study], -t.score))[:count]
    latest = trials[-1].point.study if trials else None
    if latest is not None and latest != own and latest in best and best[latest] not in ranked:
        ranked.append(best[latest])
    return [
        Structure(
            t.point.study,
            files_at(t.commit),
            t.score,
            counts[t.point.study],
            t.point.study == latest,
            inert[t.point.study],
            failed[t.point.study],
        )
        for t in ranked
    ]


def _better(trial: Trial, than: Trial) -> bool:
    """Whether ``trial`` is a better candidate of its structure than ``than``: one that measured differently
    from the incumbent before one that did not, then the higher score."""
    return (not trial.unchanged, trial.score) > (not than.unchanged, than.score)
