"""The typed events of a run: the one source of truth of the loop.

Each event is appended to ``events.ndjson`` (and the run store) before anything else is written, and loop
state is the fold of the events (:func:`assay.loop.state.apply`), live and on resume alike. results.tsv,
experiments.jsonl and the run store's candidate rows are views of the ``decided`` events.

On disk an event is an :class:`~assay.history.records.EventRecord` whose ``kind`` is the event's ``type`` and
whose ``data`` holds the other fields. A run's first event is ``started`` with :data:`EVENTS_SCHEMA`; a run
folder without it was written before events were typed and is refused by ``assay resume``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from assay.evaluation.evaluator import EvalResult
from assay.history.records import CandidateRecord, EventRecord
from assay.loop.flags import Flag
from assay.loop.overfitting import later_verdict, legacy_verdict
from assay.model import OverfitVerdict
from assay.proposers.base import TunedPoint
from assay.static.report import StaticReport

EVENTS_SCHEMA = 2

Runs = dict[str, list[float]]


class Spend(BaseModel):
    """What one step cost: case runs (the evaluation budget), tokens, dollars and judge model calls."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    case_runs: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    judge_calls: int = 0

    @classmethod
    def of(cls, *results: EvalResult | None) -> Spend:
        """What running ``results`` cost: their cases, tokens and dollars."""
        done = [r for r in results if r is not None]
        return cls(
            case_runs=sum(len(r.cases) for r in done),
            tokens=sum(r.tokens for r in done),
            cost_usd=sum(r.cost_usd for r in done),
        )

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            case_runs=self.case_runs + other.case_runs,
            tokens=self.tokens + other.tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            judge_calls=self.judge_calls + other.judge_calls,
        )


class _Event(BaseModel):
    """Fields every event has: the run's running time in seconds when it was made (time between a kill and a
    resume does not count) and what the step that made it spent. Events are frozen: what happened stays as it
    was logged (``model_copy(update=...)`` makes another)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    elapsed: float = 0.0
    spent: Spend = Field(default_factory=Spend)


class Overrides(BaseModel):
    """What the command line set over assay.yaml for a session of a run (None, False: not set): ``assay evolve``'s
    ``-n``, ``--preset``, ``--executor``, ``--no-cache`` and ``--proposer``. ``assay resume`` takes them up again
    (:mod:`assay.loop.overrides`); an override flag added to ``assay evolve`` is a field here."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_generations: int | None = None
    preset: str | None = None
    executor: Literal["local", "ray"] | None = None
    no_cache: bool = False
    proposer: str | None = None  # --proposer: a name evolve.proposer.type takes, with assay.yaml's options


class Started(_Event):
    """A session of the run began (``resumed`` after a stop or kill), with the ``overrides`` it ran with (None:
    recorded before they were)."""

    type: Literal["started"] = "started"
    schema_: int = Field(default=EVENTS_SCHEMA, alias="schema")
    resumed: bool = False
    overrides: Overrides | None = None

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class Measured(_Event):
    """A commit measured: ``L2`` is the static tier and the dev cases, ``L3`` the holdout and regression
    cases. ``size`` is the artifact's size in bytes, ``content_size`` the size of what it says (comments and
    formatting aside: :func:`~assay.proposers.fingerprint.content_size`; 0 in runs recorded before it) and
    ``content`` a hash of its files (L2 only);
    ``screened_out``: L2 ran only its first few dev cases, which all crashed, timed out or printed nothing."""

    type: Literal["measured"] = "measured"
    commit: str
    generation: int
    tier: Literal["L2", "L3"]
    static: StaticReport | None = None
    dev: EvalResult | None = None
    holdout: EvalResult | None = None
    regression: EvalResult | None = None
    size: int = 0
    content_size: int = 0
    content: str = ""
    tree: str = ""  # the artifact's fingerprint (assay.proposers.fingerprint), L2 only
    screened_out: bool = False  # L2 stopped after its first dev cases all crashed


class NoiseMeasured(_Event):
    """The baseline's dev cases run ``runs_per_case`` times: per case, 1.0 for a pass and 0.0 for a failure."""

    type: Literal["noise"] = "noise"
    commit: str
    runs: Runs
    runs_per_case: int


class ProposalMade(BaseModel):
    """One change a proposer made on top of ``parent`` (``commit`` None: it failed or changed nothing).

    ``operator`` is what made it (``py.guard``, ``tune``, ``llm.edit``; the proposer's name when it says nothing
    more), ``sites`` what it touched by name, as the proposer names them (``priority.py:priority#2``), and
    ``places`` where, from the commit's diff (``priority.py:12-14 (priority)``). ``tree`` is the change's
    fingerprint (formatting and comments ignored); ``redrawn`` lists the draws thrown away before it because they
    repeated an earlier candidate, or because nothing applied at a layer (``layer`` is the one the change was
    made at); ``point``, in runs recorded before proposers derived their own state, was its place in numeric
    tuning's search (read, never written)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    parent: str
    layer: int
    proposer: str
    operator: str = ""
    sites: list[str] = Field(default_factory=list)
    places: list[str] = Field(default_factory=list)
    description: str
    commit: str | None = None
    citations: list[str] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)
    violations: list[str] = Field(default_factory=list)
    tokens: int = 0
    cost_usd: float = 0.0
    number: int | None = None  # the pipeline's proposal number, when made ahead
    tree: str = ""
    redrawn: list[str] = Field(default_factory=list)
    point: TunedPoint | None = None


class Committed(_Event):
    """Generation ``generation`` proposed and committed a candidate; it waits for measuring and the gate.
    ``sampled``: the parent selector chose the parent (which counts a visit of it)."""

    type: Literal["committed"] = "committed"
    generation: int
    proposal: ProposalMade
    sampled: bool = False


class Trimmed(_Event):
    """Generation ``generation``'s kept candidate tried without groups of its changed sites (:mod:`assay.loop.inert`):
    ``reverted`` names the sites whose reversal changed no dev case's result, ``proposal`` and ``measured`` are the
    candidate without them that the generation decides on instead (None: none was reverted)."""

    type: Literal["trimmed"] = "trimmed"
    generation: int
    reverted: list[str] = Field(default_factory=list)
    proposal: ProposalMade | None = None
    measured: Measured | None = None


class Proposed(_Event):
    """The pipeline made proposal ``number`` ahead of its evaluation, with its place in the queue."""

    type: Literal["proposed"] = "proposed"
    number: int
    proposal: ProposalMade
    priority: float


class Dropped(_Event):
    """Proposals made ahead but never evaluated (they stay reachable under their refs)."""

    type: Literal["dropped"] = "dropped"
    numbers: list[int]


class MatchOutcomeData(BaseModel):
    """One rated comparison: ``winner`` is a, b or None for a tie."""

    model_config = ConfigDict(extra="forbid")

    a: str
    b: str
    winner: str | None
    weight: float = 1.0


class MatchLog(BaseModel):
    """One match as people read it: the opponent, the kind, the score and the judge's votes and reason."""

    opponent: str
    kind: str
    score: float
    won: bool = False  # the candidate won the match (a baseline match: its own score exceeded the threshold)
    votes: list[Any] = Field(default_factory=list)
    reason: str = ""


class MatchesPlayed(_Event):
    """The candidate's tournament matches. ``updates`` are the rating updates in the order they were applied
    (one batch for the generation's matches, then one per adaptive insertion match)."""

    type: Literal["matches"] = "matches"
    candidate: str
    commit: str | None
    kept: bool
    updates: list[list[MatchOutcomeData]]
    baseline_win_rate: float
    rating: float
    uncertainty: float
    matches: list[MatchLog] = Field(default_factory=list)
    score: float = 0.5  # the candidate's mean match score
    # False: the updates are not applied (a discarded candidate under a tournament-fed gate or the pool).
    rated: bool = True
    # "screen": SIFT's judge-first ranking, on the files, before any evaluation.
    stage: Literal["tournament", "screen"] = "tournament"
    # Elo's K the updates were made with; None: an older assay's event (K 32) or another rating backend.
    k_factor: float | None = None


class ExtraRuns(BaseModel):
    """Fresh runs the paired gate asked for, per case: on the parent and on the candidate."""

    model_config = ConfigDict(extra="forbid")

    parent: str = ""
    on_parent: Runs = Field(default_factory=dict)
    on_candidate: Runs = Field(default_factory=dict)


class Decided(_Event):
    """The decision on a candidate (the baseline's record too): its full record and the paired gate's runs.
    For a proposal that made no commit (decision ``invalid``): whether its parent was ``sampled`` and its
    pipeline ``proposal`` number."""

    type: Literal["decided"] = "decided"
    record: CandidateRecord
    extra_runs: ExtraRuns = Field(default_factory=ExtraRuns)
    sampled: bool = False
    proposal: int | None = None
    gate_state: dict[str, Any] | None = None  # what the gate remembers after this decision (None: not asked)


class Verified(_Event):
    """L3 on the best candidate after its record was written (before a layer promotion and at the end), and the
    overfitting rule's verdict on it. An assay that keeps verdicts gives one whenever the holdout was measured;
    None with a measured holdout is an older assay's event, whose rule was the 0.15 gap."""

    type: Literal["verified"] = "verified"
    candidate_id: str
    commit: str
    holdout: EvalResult | None = None
    regression: EvalResult | None = None
    overfitting: OverfitVerdict | None = None

    def verdict(self, dev_pass_rate: float | None) -> OverfitVerdict | None:
        """The overfitting verdict of this verification: the one recorded, or for an event recorded before
        verdicts were, the rule of the assay that recorded it on ``dev_pass_rate`` (the candidate's)."""
        if self.overfitting is not None:
            return self.overfitting
        return legacy_verdict(dev_pass_rate, self.holdout)

    def update(self, record: CandidateRecord) -> CandidateRecord:
        """``record`` with what this verification measured: its holdout score and regression pass rate, its
        overfitting verdict, and the ``overfitting`` flag when the verdict flags it (as at a decision). A flag,
        and the verdict that raised it, stay when a later verification does not flag."""
        flags, verdict = list(record.flags), self.verdict(record.dev_pass_rate)
        if verdict is not None and verdict.flagged and Flag.OVERFITTING not in flags:
            flags.append(Flag.OVERFITTING)
        return record.model_copy(
            update={
                "holdout_score": self.holdout.mean_score if self.holdout else None,
                "regression_pass_rate": self.regression.pass_rate if self.regression else None,
                "flags": flags,
                "overfitting": later_verdict(record.overfitting, self.overfitting),
            }
        )


class Picked(_Event):
    """At the end, ``evolve.final_pick: rating`` named the kept candidate with the highest tournament rating as the
    run's best (SIFT's final pick by judge rank), in place of the last one the gate kept."""

    type: Literal["picked"] = "picked"
    candidate_id: str
    commit: str
    rating: float
    replaced: str


class LayerPromoted(_Event):
    """Three discards in a row moved the proposer to the next layer (after the best was verified)."""

    type: Literal["layer"] = "layer"
    generation: int
    layer: int
    exhausted: bool
    best_holdout_score: float | None = None


class Interrupted(_Event):
    """Ctrl-C twice: the generation in progress was abandoned."""

    type: Literal["interrupted"] = "interrupted"
    generation: int


class Finished(_Event):
    """The run stopped for ``reason``; ``status`` is finished, or stopped (Ctrl-C, a STOP file)."""

    type: Literal["finished"] = "finished"
    reason: str
    status: Literal["finished", "stopped"]
    best: str
    generation: int
    best_dev_score: float | None = None
    best_holdout_score: float | None = None
    suspects: list[str] = Field(default_factory=list)


Event = Annotated[
    Started
    | Measured
    | NoiseMeasured
    | Committed
    | Trimmed
    | Proposed
    | Dropped
    | MatchesPlayed
    | Decided
    | Verified
    | Picked
    | LayerPromoted
    | Interrupted
    | Finished,
    Field(discriminator="type"),
]

_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


class UntypedRun(ValueError):
    """A run folder whose events are not typed events of this schema (written by an older assay)."""


def to_record(event: Event, *, run_id: str, seq: int) -> EventRecord:
    """The stored form of ``event`` as the run's ``seq``-th event."""
    data = event.model_dump(mode="json", by_alias=True)
    kind = data.pop("type")
    return EventRecord(run_id=run_id, seq=seq, kind=kind, data=data)


def from_record(record: EventRecord) -> Event:
    """The typed event stored in ``record`` (UntypedRun when it is not one)."""
    try:
        return _ADAPTER.validate_python({"type": record.kind, **record.data})
    except ValueError as exc:
        raise UntypedRun(f"event {record.seq} ({record.kind}) is not a typed event: {exc}") from None


def typed_events(records: list[EventRecord]) -> list[Event]:
    """The typed events of a run folder, checking that it was written with this schema."""
    if not records:
        return []
    first = records[0]
    if first.kind != "started" or first.data.get("schema") != EVENTS_SCHEMA:
        raise UntypedRun(
            "its event log was written by an older assay (no typed events; schema "
            f"{first.data.get('schema', 1)}, this assay writes {EVENTS_SCHEMA})"
        )
    return [from_record(r) for r in records]
