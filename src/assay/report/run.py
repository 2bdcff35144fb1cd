"""A run as its report shows it, folded from the run's typed events.

The run is read through its frozen view after each event (:func:`assay.loop.state.replay`, the loop's own
fold); at each ``decided`` event the view's decision gives the candidate's record, its measurement and its
matches as they stood, so the report shows what the loop knew when it decided. A run still in progress or killed
between two events shows its undecided candidate as ``pending``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from assay.config import AssayConfig
from assay.history.git import Git
from assay.history.gitrun import GitError
from assay.history.owner import live_status
from assay.history.reasons import evaluated, reason_of
from assay.history.records import CandidateRecord, RunRecord, paired_test_summary
from assay.history.runfiles import read_events
from assay.loop.events import (
    Decided,
    Event,
    ExtraRuns,
    LayerPromoted,
    MatchesPlayed,
    Measured,
    Spend,
    Verified,
    typed_events,
)
from assay.loop.flags import Flag, retried, screened_out
from assay.loop.measure import Measurement, crashed
from assay.loop.overfitting import later_verdict
from assay.loop.state import DecisionView, PendingView, RunView, replay
from assay.model import Dimension, OverfitVerdict
from assay.proposers.credit import Credit, Tally
from assay.report.views import CaseView, DiffLine, diff_lines
from assay.static.report import Finding

KEPT_OUTPUT_CHARS = 1500
CHANGED_OUTPUT_CHARS = 600
# Characters of recorded text (outputs, failing checks' evidence) all candidates but the baseline and the best
# may show: a long run's report stays under 2 MB (benchmarks/report_size.py), each text cut to share it out.
TEXT_BUDGET = 700_000
MIN_CUT = 80


@dataclass
class CandidateNode:
    """One candidate: its record's fields, what measured it, what the gate said, its diff and its cases.

    ``decision`` is the record's, or ``pending`` for a candidate committed but not decided when the log ends;
    ``reason`` the decision in one line (:mod:`assay.history.reasons`).
    ``cases`` are its dev results; ``changed`` the ids of dev cases whose verdict differs from its parent's.
    """

    id: str
    generation: int
    commit: str | None
    parent_commit: str | None
    layer: int
    proposer: str
    description: str
    decision: str
    operator: str = ""  # what made the change (``tune``, ``py.guard``), and the sites it named
    sites: list[str] = field(default_factory=list)
    crashed: bool = False  # no dev case of it ran
    reason: str = ""
    flags: list[str] = field(default_factory=list)
    overfitting: OverfitVerdict | None = None  # the overfitting rule's verdict on its holdout
    dev_score: float | None = None
    dev_pass_rate: float | None = None
    holdout_score: float | None = None
    regression_pass_rate: float | None = None
    delta: float | None = None
    tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    gate: dict[str, Dimension] = field(default_factory=dict)
    regressions: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    cases: list[CaseView] = field(default_factory=list)
    holdout: list[CaseView] = field(default_factory=list)
    regression: list[CaseView] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    matches: MatchesPlayed | None = None
    extra_runs: ExtraRuns = field(default_factory=ExtraRuns)
    parent_id: str | None = None
    diff: list[DiffLine] = field(default_factory=list)
    diff_more: int = 0
    diff_note: str = ""

    @property
    def retried(self) -> bool:
        return retried(self.flags)

    @property
    def mark(self) -> str:
        """How charts colour it: baseline, keep, discard, invalid, retry or pending."""
        return "retry" if self.retried else self.decision

    @property
    def paired_test(self) -> str:
        """The noise-aware gate's paired test in a few words ("" when it did not judge this candidate)."""
        return paired_test_summary(self.gate)


@dataclass
class SpendPoint:
    """What the run had spent, in total, when generation ``generation`` was decided."""

    generation: int
    elapsed: float
    spent: Spend


@dataclass
class RatingPoint:
    """A candidate's rating after its matches."""

    generation: int
    candidate: str
    rating: float
    uncertainty: float
    kept: bool


@dataclass
class HoldoutPoint:
    """L3 ran on a candidate: its holdout score and regression pass rate."""

    generation: int
    candidate: str
    holdout: float | None
    regression: float | None


@dataclass
class RunReport:
    """Everything the run report shows (see the module docstring)."""

    run: RunRecord
    status: str
    config: AssayConfig | None
    nodes: list[CandidateNode]
    spent: Spend
    elapsed: float
    stop_reason: str | None
    layer_changes: list[LayerPromoted] = field(default_factory=list)
    holdout_points: list[HoldoutPoint] = field(default_factory=list)
    ratings: list[RatingPoint] = field(default_factory=list)
    leaderboard: list[tuple[str, float, float]] = field(default_factory=list)
    spend: list[SpendPoint] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    suspects: list[str] = field(default_factory=list)
    noise_summary: str = ""
    best_diff: list[DiffLine] = field(default_factory=list)
    best_diff_more: int = 0
    best_diff_note: str = ""

    @property
    def baseline(self) -> CandidateNode | None:
        return next((n for n in self.nodes if n.decision == "baseline"), None)

    @property
    def best(self) -> CandidateNode | None:
        """The last kept candidate; for a run that ended, the one it named (as ``best_candidate`` picks it)."""
        kept = self.kept
        ended = self.run.best if self.run.status != "running" else None
        named = [n for n in kept if ended and n.commit == ended]
        return (named or kept)[-1] if kept else None

    @property
    def kept(self) -> list[CandidateNode]:
        return [n for n in self.nodes if n.decision in ("baseline", "keep")]

    def node(self, candidate_id: str) -> CandidateNode | None:
        return next((n for n in self.nodes if n.id == candidate_id), None)

    @property
    def moves(self) -> list[tuple[str, Tally]]:
        """Each operator's record in the run (:class:`~assay.proposers.credit.Credit`): proposed, crashed,
        screened out, kept, gain; most proposed first."""
        credit = Credit()
        for node in self.nodes:
            if node.commit is not None and node.decision not in ("baseline", "pending"):
                credit.add(
                    node.operator or node.proposer,
                    node.sites,
                    crashed=node.crashed,
                    screened=screened_out(node.flags),
                    kept=node.decision == "keep",
                    gain=node.delta,
                )
        return credit.rows()


def load_run_report(run: RunRecord, run_dir: Path, config: AssayConfig | None) -> RunReport:
    """The report of ``run`` from its folder's events, with diffs from the project's git repository."""
    events = typed_events(read_events(run_dir))
    run_config = _run_config(run) or config
    builder = _Builder()
    view = RunView()
    for event, view in replay(events, run_config):
        builder.add(event, view)
    if view.pending is not None:
        builder.pending(view.pending)
    nodes = builder.nodes
    _link(nodes)
    _fit(nodes)
    finished = view.finished
    report = RunReport(
        run=run,
        status=live_status(run, run_dir),
        config=run_config,
        nodes=nodes,
        spent=view.spent,
        elapsed=view.elapsed,
        stop_reason=finished.reason if finished else run.stop_reason,
        layer_changes=builder.layer_changes,
        holdout_points=builder.holdout_points,
        ratings=builder.ratings,
        spend=builder.spend,
        flaky=list(view.flaky),
        suspects=finished.suspects if finished else list(view.suspects),
        noise_summary=view.noise_summary,
    )
    report.leaderboard = [(row.candidate_id, row.rating, row.uncertainty) for row in view.leaderboard]
    _add_diffs(report, config.base_dir if config else run_dir)
    return report


def _run_config(run: RunRecord) -> AssayConfig | None:
    """The configuration the run was started with (None when this assay cannot read it)."""
    try:
        return AssayConfig.model_validate(run.config)
    except ValidationError:
        return None


class _Builder:
    """Takes a node at each decision of the run, reading the run's view after each event."""

    def __init__(self) -> None:
        self.nodes: list[CandidateNode] = []
        self.layer_changes: list[LayerPromoted] = []
        self.holdout_points: list[HoldoutPoint] = []
        self.ratings: list[RatingPoint] = []
        self.spend: list[SpendPoint] = []
        self._generation = 0

    def add(self, event: Event, view: RunView) -> None:
        match event:
            case Decided() if view.decided is not None:
                self._decided(event, view.decided, view)
            case Verified():
                self._verified(event)
            case Measured(tier="L3"):
                self._l3(event)
            case LayerPromoted():
                self.layer_changes.append(event)
            case MatchesPlayed(stage="tournament"):
                self.ratings.append(
                    RatingPoint(
                        generation=view.pending.generation if view.pending else self._generation,
                        candidate=event.candidate,
                        rating=event.rating,
                        uncertainty=event.uncertainty,
                        kept=event.kept,
                    )
                )

    def pending(self, pending: PendingView) -> None:
        proposal = pending.proposal
        node = CandidateNode(
            id="pending",
            generation=pending.generation,
            commit=proposal.commit,
            parent_commit=proposal.parent,
            layer=proposal.layer,
            proposer=proposal.proposer,
            description=proposal.description,
            decision="pending",
            flags=list(proposal.flags),
            matches=pending.matches,
        )
        self._measure(node, pending.measurement, kept=False)
        dev = pending.measurement.dev
        if dev is not None:
            node.dev_score, node.dev_pass_rate = dev.mean_score, dev.pass_rate
        self.nodes.append(node)

    def _decided(self, event: Decided, decided: DecisionView, view: RunView) -> None:
        record = event.record
        self._generation = record.generation
        node = _node(record)
        node.extra_runs = event.extra_runs
        if record.decision != "baseline":
            node.matches = decided.matches
        self._measure(node, decided.measurement, kept=record.decision in ("baseline", "keep"))
        node.crashed = record.commit is not None and crashed(decided.measurement.dev)
        self.nodes.append(node)
        self.spend.append(SpendPoint(record.generation, view.elapsed, view.spent))

    def _measure(self, node: CandidateNode, measurement: Measurement, *, kept: bool) -> None:
        parent = self._by_commit(node.parent_commit)
        before = {c.id: c.passed for c in parent.cases} if parent else {}
        dev = measurement.dev.cases if measurement.dev else []
        node.changed = [c.id for c in dev if c.id in before and before[c.id] != c.passed]
        # Outputs of every case for kept candidates; of the cases whose verdict changed for the others (what
        # the gate weighed), so a long run stays within the size the report promises.
        node.cases = [
            CaseView.of(
                c,
                with_output=kept or c.id in node.changed or not before,
                limit=KEPT_OUTPUT_CHARS if kept else CHANGED_OUTPUT_CHARS,
            )
            for c in dev
        ]
        for split, result in (("holdout", measurement.holdout), ("regression", measurement.regression)):
            views = [CaseView.of(c, limit=CHANGED_OUTPUT_CHARS) for c in result.cases] if result else []
            setattr(node, split, views)
        node.findings = list(measurement.static.findings) if measurement.static else []

    def _by_commit(self, commit: str | None) -> CandidateNode | None:
        if commit is None:
            return None
        return next((n for n in reversed(self.nodes) if n.commit == commit and n.cases), None)

    def _verified(self, event: Verified) -> None:
        for node in self.nodes:
            if node.id == event.candidate_id:
                node.holdout_score = event.holdout.mean_score if event.holdout else node.holdout_score
                node.regression_pass_rate = (
                    event.regression.pass_rate if event.regression else node.regression_pass_rate
                )
                if event.holdout:
                    node.holdout = [CaseView.of(c, limit=CHANGED_OUTPUT_CHARS) for c in event.holdout.cases]
                    verdict = event.verdict(node.dev_pass_rate)
                    if verdict is not None and verdict.flagged and Flag.OVERFITTING not in node.flags:
                        node.flags.append(Flag.OVERFITTING)
                    node.overfitting = later_verdict(node.overfitting, event.overfitting)
                if event.regression:
                    node.regression = [
                        CaseView.of(c, limit=CHANGED_OUTPUT_CHARS) for c in event.regression.cases
                    ]
                self.holdout_points.append(
                    HoldoutPoint(node.generation, node.id, node.holdout_score, node.regression_pass_rate)
                )

    def _l3(self, event: Measured) -> None:
        self.holdout_points.append(
            HoldoutPoint(
                generation=event.generation,
                candidate=f"gen {event.generation}",
                holdout=event.holdout.mean_score if event.holdout else None,
                regression=event.regression.pass_rate if event.regression else None,
            )
        )


def _node(record: CandidateRecord) -> CandidateNode:
    return CandidateNode(
        id=record.candidate_id,
        generation=record.generation,
        commit=record.commit,
        parent_commit=record.parent,
        layer=record.layer,
        proposer=record.proposer,
        description=record.description,
        decision=record.decision,
        operator=record.operator,
        sites=list(record.sites),
        reason=reason_of(record),
        flags=list(record.flags),
        overfitting=record.overfitting,
        dev_score=record.dev_score if evaluated(record) else None,  # no score beside "not evaluated"
        dev_pass_rate=record.dev_pass_rate if evaluated(record) else None,
        holdout_score=record.holdout_score,
        regression_pass_rate=record.regression_pass_rate,
        delta=record.delta,
        tokens=record.tokens,
        cost_usd=record.cost_usd,
        seconds=record.seconds,
        gate=dict(record.gate),
        regressions=list(record.regressions),
    )


def _fit(nodes: list[CandidateNode]) -> None:
    """The baseline and the best show every output and all evidence. The other candidates show the outputs of
    the cases whose verdict changed against the parent and the evidence of their failing checks, cut to share
    :data:`TEXT_BUDGET` characters between them."""
    kept = [n for n in nodes if n.decision in ("baseline", "keep")]
    whole = {kept[0].id, kept[-1].id} if kept else set()
    others = [n for n in nodes if n.id not in whole]
    for node in others:
        node.cases = [c if c.id in node.changed else c.without_output() for c in node.cases]
    texts = sum(
        (c.output is not None) + sum(not check.passed for check in c.checks) for n in others for c in n.cases
    )
    limit = max(MIN_CUT, min(CHANGED_OUTPUT_CHARS, TEXT_BUDGET // max(1, texts)))
    for node in others:
        node.cases = [case.cut(limit) for case in node.cases]


def _link(nodes: list[CandidateNode]) -> None:
    """Each node's parent candidate id, from the commit its record names."""
    by_commit: dict[str, str] = {}
    for node in nodes:
        if node.parent_commit is not None:
            node.parent_id = by_commit.get(node.parent_commit)
        if node.commit is not None and node.commit not in by_commit:
            by_commit[node.commit] = node.id


def _add_diffs(report: RunReport, where: Path) -> None:
    """Each candidate's diff against its parent, and the baseline → best diff (a note when git cannot)."""
    git = Git.discover(where)
    for node in report.nodes:
        if node.commit is None or node.parent_commit is None:
            node.diff_note = (
                "no commit: the proposal changed nothing or failed" if node.commit is None else ""
            )
            continue
        node.diff, node.diff_more, node.diff_note = _diff(git, node.parent_commit, node.commit)
    base, best = report.baseline, report.best
    if base is not None and best is not None and base.commit and best.commit:
        report.best_diff, report.best_diff_more, report.best_diff_note = _diff(git, base.commit, best.commit)


def _diff(git: Git | None, a: str, b: str) -> tuple[list[DiffLine], int, str]:
    if git is None:
        return [], 0, "no git repository here to read the diff from"
    try:
        text = git.diff(a, b)
    except GitError as exc:
        return [], 0, f"diff unavailable: {exc}"
    lines, more = diff_lines(text)
    return lines, more, "" if text else "no change to the files"
