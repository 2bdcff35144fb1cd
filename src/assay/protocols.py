"""The contract of every extension point, as ``runtime_checkable`` Protocols: what an object must have to be
plugged in as a gate, a parent selector, a proposer, a pairwise judge, a stop rule, a runner, a check, a rating
backend or an executor.

Each Protocol holds only the *required* members, the ones the family's base class leaves abstract (a check's
is ``run``, what the evaluator calls). The base classes (:class:`~assay.gates.Gate`,
:class:`~assay.search.ParentSelector`, ...) are optional helpers that satisfy their Protocol and supply the
*optional* members; an object of another class gets those from :func:`assay.extensions.conform`, which also
refuses, in one line, an object that lacks a required member. ``isinstance(obj, GateProtocol)`` says only
whether the required members are there, not whether they are callable or async.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from assay.checks.base import CheckProtocol
from assay.evaluation.executor import ExecutorProtocol
from assay.ratings.base import RatingBackendProtocol
from assay.runners.base import RunnerProtocol

if TYPE_CHECKING:
    from assay.gates.base import GateDecision, GateInput
    from assay.proposers.base import Proposal, ProposerView
    from assay.search.archive import Archive
    from assay.tournament.judges import Contestant, PairVerdict


@runtime_checkable
class GateProtocol(Protocol):
    """Keeps a candidate or discards it.

    Optional: ``snapshot() -> dict`` and ``restore(snapshot)``, what the gate remembers between decisions
    (default: nothing); ``name``."""

    async def decide(self, data: GateInput) -> GateDecision:
        """Judge ``data`` (parent, candidate and baseline results): keep or discard, with the reasons."""
        ...


@runtime_checkable
class ParentSelectorProtocol(Protocol):
    """Chooses the candidate of the archive to expand next.

    Optional: ``choose(archive, rng) -> str`` (default: a draw from ``probabilities`` with ``rng``)."""

    def probabilities(self, archive: Archive) -> dict[str, float]:
        """The probability of each node (by id, in archive order) being the next parent; they sum to 1."""
        ...


@runtime_checkable
class ProposerProtocol(Protocol):
    """Proposes one change per call by editing files in ``worktree``.

    Optional: ``name`` (default: the class name), recorded with each proposal; ``redraws`` (default 2), draws
    per layer when a proposal repeats an earlier candidate; ``async aclose()``, called at the end of the run;
    ``tidies(view) -> bool`` (default False) and ``async tidy(view, worktree, *, editable) -> Proposal``
    (default: nothing to tidy), what the loop asks for before it stops. The loop writes nothing onto a
    proposer: what it learns of earlier generations it derives from ``view.history``."""

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        """Edit ``worktree`` and describe the change; a failed proposal is ``Proposal(ok=False, error=...)``."""
        ...


@runtime_checkable
class PairwiseJudgeProtocol(Protocol):
    """Decides which of two contestants is better. Optional: ``name``."""

    async def compare(self, a: Contestant, b: Contestant, *, round: int = 0) -> PairVerdict:
        """The winner of ``a`` against ``b`` (None for a tie), with the reason and the cost of deciding."""
        ...


@runtime_checkable
class StopRuleProtocol(Protocol):
    """Ends a run: checked before each generation.

    Optional: ``tidy_first`` (default False), whether the proposer may first tidy the best before the run
    ends (:meth:`~assay.proposers.Proposer.tidy`); ``name``."""

    def check(self, run: Any) -> str | None:
        """A one-line reason to stop, or None to go on; ``run`` is what the loop knows of the run so far."""
        ...


__all__ = [
    "CheckProtocol",
    "ExecutorProtocol",
    "GateProtocol",
    "PairwiseJudgeProtocol",
    "ParentSelectorProtocol",
    "ProposerProtocol",
    "RatingBackendProtocol",
    "RunnerProtocol",
    "StopRuleProtocol",
]
