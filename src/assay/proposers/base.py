"""The proposer contract: what a proposer may see (``ProposerView``), what it returns (``Proposal``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from assay.proposers.budget import DEFAULT_CONTEXT_TOKENS
from assay.registry import Registry


@dataclass(frozen=True)
class DevCase:
    """A dev case as a proposer sees it: its ``id`` (redacted) and its own ``input`` as it is, or, for a
    case without one, its ``vars`` as they are (a proposer may see a dev case's input even when a check value
    can be derived from it)."""

    id: str
    input: str | None = None
    vars: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CaseFailure:
    """How a failing dev case failed: its ``id`` and ``how`` (by check type only, never a check value:
    ``output missing an expected element``, ``rubric check 1 failed``), both redacted."""

    id: str
    how: str


@dataclass(frozen=True)
class HistoryEntry:
    """One earlier decided generation: its ``generation`` number, its ``description`` and the gate's
    ``decision`` (``keep``, ``discard``; both redacted in a view), the ``proposer`` that made it (``llm``,
    ``mutate``, ``tune``; '' when not known) and the ``operator`` (the part of it that made the change: ``py.guard``,
    ``tune``, ``llm``; '' when not known), the change in mean dev score it made (``delta``, None when not
    measured) and ``same_parent`` when it was proposed from the same parent as this proposal.

    What it was and how it measured: its ``commit`` and its ``parent`` ('' when it was not committed), its mean
    dev ``score`` (None when not measured), ``best_score``, the mean dev score of the best it was compared with
    when it was decided, ``crashed`` when none of its dev cases ran and ``screened`` when it was screened out
    before all of them did; the ``sites`` its change named (``priority.py:priority#2``). A proposer that keeps state derives it
    from these entries (and the files of their commits, :attr:`ProposerView.artifact_at`), so a resumed run,
    whose history is folded from the same events, proposes as the uninterrupted run."""

    generation: int
    description: str
    decision: str
    proposer: str = ""
    delta: float | None = None
    same_parent: bool = False
    operator: str = ""
    commit: str = ""
    parent: str = ""
    score: float | None = None
    best_score: float | None = None
    crashed: bool = False
    screened: bool = False
    sites: tuple[str, ...] = ()


@dataclass
class RetryNote:
    """autocontext's retry context, after a gate asked to retry: the last attempt's score against the best's,
    the gain it still lacked, and how its failing dev cases failed (redacted)."""

    score: float
    best_score: float
    needed: float
    failures: list[CaseFailure] = field(default_factory=list)


class TunedPoint(BaseModel):
    """Where a candidate sits in numeric tuning's search: the ``study`` (a hash of its program with the tunable
    numbers taken out) and the ``values`` of those numbers, by parameter name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    study: str
    values: dict[str, float]


@dataclass
class Reflection:
    """One dev case as the llm proposer sees it inline (GEPA's reflective example): what went in, what came
    out, and each check's neutral verdict. ``label`` numbers it in the prompt (``[3]``), which ``CITES:``
    names. Every string is redacted except ``input`` (the case's own input or vars, as for ``dev_cases``).

    ``kind``: ``crash``, ``timeout``, ``format``, ``content``, ``judged`` or ``passed`` (shown for contrast);
    ``regressed``: it passed in the baseline; ``output_head`` / ``output_tail``: the start and the end of the
    output (``output_tail`` empty when the whole output is in ``output_head``) with ``output_chars`` its full
    length; ``stderr_tail``: the end of stderr, only for a crash or a timeout; ``verdicts``: per check, in
    order, ``(type, "passed" or how it failed)``."""

    label: int
    id: str
    kind: str
    input: dict[str, Any]
    output_head: str = ""
    output_tail: str = ""
    output_chars: int = 0
    stderr_tail: str = ""
    error: str | None = None
    exit_code: int | None = None
    seconds: float = 0.0
    regressed: bool = False
    verdicts: list[tuple[str, str]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.kind == "passed"


def _no_files(commit: str) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class ProposerView:
    """Everything a proposer may see — and nothing else; what every proposer may read, whatever it does with
    it. Every string in it has been through the Redactor except ``artifact``, the files the proposer edits, the
    files of earlier candidates (``artifact_at``) and the dev cases' own inputs and vars (see
    ``assay.proposers.context``).

    ``artifact``: the parent's editable files; ``parent``: its commit, ``parent_score``: its mean dev score (None
    when not measured); ``layer``: the layer to work at; ``generation``: the proposal's number (seeds a
    deterministic proposer); ``attempt``: the draw, counted from 0 (a draw that repeated an earlier candidate is
    made again with the next one);
    ``dev_cases``: a :class:`DevCase` (id, and input or vars) per dev case, of dev cases only;
    ``failures``: a :class:`CaseFailure` (id, how) per failing dev case; ``last_gate``: the gate's reasons
    for the last discard; ``history``: a :class:`HistoryEntry` per decided generation (oldest first; a prompt
    shows the recent ones); ``trace_paths``: redacted trace copies of failing dev cases;
    ``retry``: the last attempt to try again from, when the gate asked for a retry; ``reflections``: chosen
    failing dev cases (diverse failure kinds first, regressions first within a kind) and one or two passing
    ones, in the order of priority, with ``more_failing`` the failing cases not among them;
    ``best_diff``: the current best's diff against the baseline (empty when they are the same);
    ``context_tokens``: the prompt's token budget; ``artifact_at(commit)``: the editable files of an earlier
    candidate (a commit of the history), as they were.

    The view is frozen: the loop makes a new one for each draw.
    """

    artifact: dict[str, str]
    layer: int
    generation: int = 0
    attempt: int = 0
    parent: str = ""
    parent_score: float | None = None
    retry: RetryNote | None = None
    dev_cases: list[DevCase] = field(default_factory=list)
    failures: list[CaseFailure] = field(default_factory=list)
    last_gate: list[str] = field(default_factory=list)
    history: list[HistoryEntry] = field(default_factory=list)
    trace_paths: list[str] = field(default_factory=list)
    reflections: list[Reflection] = field(default_factory=list)
    more_failing: int = 0
    best_diff: str = ""
    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    artifact_at: Callable[[str], dict[str, str]] = field(default=_no_files, compare=False, repr=False)


class Proposal(BaseModel):
    """The outcome of one proposal. ``ok=False`` with a one-line ``error`` is a recorded failed proposal
    (bad answer, failed apply, no edit), never an exception. ``citations`` name what the proposal cited: the
    (redacted) ids of the cases cited by label for the llm proposer, the trace paths for the agent.
    ``operator`` and ``sites`` say what made the change and what it touched by name; the loop records them
    with the places (file and lines) the change touched, which it finds in the diff itself."""

    ok: bool
    description: str
    error: str | None = None
    citations: list[str] = Field(default_factory=list)
    exhausted: bool = False  # nothing applies at this layer (the loop moves on to the next one)
    via: str | None = None  # the part of a composite proposer that made it (recorded as the proposer)
    operator: str = (
        ""  # what made the change (``py.guard``, ``tune``, ``llm.edit``): the proposer's name if empty
    )
    sites: list[str] = Field(default_factory=list)  # what it touched, by name (``priority.py:priority#2``)
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0


class Proposer(ABC):
    """Proposes one change per call by editing files in ``worktree`` (editable paths are relative to it).

    A proposer's state is its own: what it learns from earlier generations it derives from ``view.history``
    (folded from the run's events), never from what the loop writes onto it, so a resumed run is the same run."""

    name: ClassVar[str]
    # Draws per layer when a proposal repeats an earlier candidate (each draw of a model costs a call).
    redraws: ClassVar[int] = 2

    @abstractmethod
    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        """Edit ``worktree`` and describe the change. ``editable`` holds paths or globs (``src/**/*.py``).
        Never raises for a bad answer: returns ``Proposal(ok=False, error=...)``."""

    def tidies(self, view: ProposerView) -> bool:
        """Whether :meth:`tidy` would tidy the parent of ``view`` (the best): remove something the search left
        that a simpler program does without, a change the gate keeps only when nothing measured changes. When a
        stop rule that allows it (a target met, a plateau, the generations used) ends the run, the loop first
        asks :meth:`tidy` for proposals until this says False, so a run does not end holding what it meant to
        remove. By default False: nothing to tidy."""
        return False

    async def tidy(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        """One tidying change of the parent (see :meth:`tidies`), or ``Proposal(ok=False, exhausted=True)``
        when there is nothing left to tidy (the default)."""
        return Proposal(ok=False, description="no change", error="nothing left to tidy", exhausted=True)

    async def aclose(self) -> None:  # noqa: B027 - a proposer without clients has nothing to close
        """Release the proposer's clients (a model's HTTP pool); call from the event loop that used them."""


PROPOSERS: Registry[type[Proposer]] = Registry("proposer")
