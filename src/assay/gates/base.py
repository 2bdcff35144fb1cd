"""The gate contract: given a parent and a candidate evaluation, keep the candidate or discard it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from assay.evaluation.evaluator import EvalResult
from assay.model import Dimension as Dimension  # re-exported: gates build their decisions from it
from assay.registry import Registry
from assay.static.report import StaticReport
from assay.stats import Sampler

# Re-runs one dev case of the candidate ``n`` times and returns how many runs passed (the noise rule).
Rerun = Callable[[str, int], Awaitable[int]]


class GateDecision(BaseModel):
    """keep or discard, with every dimension's verdict; ``reasons`` are the failed dimensions' details."""

    keep: bool
    dimensions: dict[str, Dimension]
    action: str = ""  # keep | discard (| retry for gates that retry)

    @property
    def reasons(self) -> list[str]:
        return [f"{name}: {d.detail}" for name, d in self.dimensions.items() if not d.passed]


def subset_note(kept: int, left_out: int) -> str:
    """`` on the 7 dev cases not yet marked unfixable (3 left out)``, or "" when no case was left out."""
    if not left_out:
        return ""
    cases = "dev case" if kept == 1 else "dev cases"
    return f" on the {kept} {cases} not yet marked unfixable ({left_out} left out)"


def scope_numbers(kept: int, left_out: int) -> dict[str, float]:
    """The size of the subset a progress dimension's figures are on, for its numbers (nothing when no case was
    left out): ``cases`` judged on, ``left_out`` unfixable ones. A reason reads them to name the subset."""
    return {"cases": kept, "left_out": left_out} if left_out else {}


@dataclass
class GateInput:
    """What a gate judges: parent and candidate dev results, their L1 reports, the baseline's per-case
    cost/time, artifact sizes (in ``size_unit``), a way to re-run a case of the candidate, and the cases to leave
    out of progress.

    For the gates that need more: ``parent_id`` names the parent (the backpressure gate's retry counter
    restarts with a new parent); the paired gate takes ``parent_runs`` (``{case_id: [run, ...]}``, 1 pass and 0
    fail, the parent's runs from its own measurement; default its dev verdicts) and ``candidate_runs`` (the
    candidate's runs already made; default its dev verdicts) and asks ``sampler`` for new runs of either side
    (:class:`~assay.stats.Sampler`; None: it judges the runs it has)."""

    parent: EvalResult
    candidate: EvalResult
    baseline: EvalResult
    parent_static: StaticReport | None = None
    candidate_static: StaticReport | None = None
    parent_size: int = 0
    candidate_size: int = 0
    size_unit: str = "bytes"  # or "characters of content": comments and formatting left out
    rerun: Rerun | None = None
    parent_id: str = ""
    parent_runs: dict[str, list[float]] | None = None
    candidate_runs: dict[str, list[float]] | None = None
    sampler: Sampler | None = None
    unfixable: frozenset[str] = frozenset()
    scores: tuple[float, float] | None = None  # (parent, candidate) scores that replace the dev means

    def for_progress(self) -> tuple[EvalResult, EvalResult]:
        """Parent and candidate results without the ``unfixable`` cases (seed 001: a case failing generation
        after generation is marked unfixable and left out of progress; it cannot regress, the best fails it).
        An unfixable case the candidate moved (its verdict or its graded score, either way) stays in both: a
        gain on it is never hidden, nor a loss; with partial credit, where no case ever passes, the score is the
        progress."""
        left_out = self._left_out()
        if not left_out:
            return self.parent, self.candidate

        def without(result: EvalResult) -> EvalResult:
            return result.model_copy(update={"cases": [c for c in result.cases if c.id not in left_out]})

        return without(self.parent), without(self.candidate)

    def progress_scope(self) -> str:
        """What the figures of :meth:`for_progress` are computed on, for a dimension's detail: "" when on every
        case, else `` on the 7 dev cases not yet marked unfixable (3 left out)`` (the headline figures of a run
        are over every dev case, so a figure on fewer says so)."""
        return subset_note(*self.progress_counts())

    def progress_counts(self) -> tuple[int, int]:
        """How many judged dev cases the figures of :meth:`for_progress` are on, and how many were left out."""
        left_out = self._left_out()
        judged = self.candidate.judged
        kept = sum(c.id not in left_out for c in judged)
        return kept, len(judged) - kept

    def _left_out(self) -> frozenset[str]:
        """The unfixable cases the candidate did not move (verdict and score as its parent's)."""
        if not self.unfixable:
            return frozenset()
        before = {c.id: (c.passed, c.score) for c in self.parent.cases}
        moved = {c.id for c in self.candidate.cases if c.id in before and (c.passed, c.score) != before[c.id]}
        return self.unfixable - moved


class Gate(ABC):
    """Decides whether a candidate is kept.

    A gate that remembers something between decisions (a retry count, recent scores) returns it from
    ``snapshot`` and takes it back in ``restore``: the loop logs the snapshot with each decision and restores
    it before the next, so a resumed run's gate remembers what the killed run's did."""

    name: str

    @abstractmethod
    async def decide(self, data: GateInput) -> GateDecision: ...

    def snapshot(self) -> dict[str, Any]:
        """What the gate remembers, JSON-ready (nothing, for a gate without memory)."""
        return {}

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Take back what :meth:`snapshot` returned (an empty dict: the state of a new gate)."""
        return None


GATES: Registry[type[Gate]] = Registry("gate")
