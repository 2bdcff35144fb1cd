"""The proposing steps of a generation: building the configured proposer, choosing the parent, and making one
proposal on top of it in a worktree (committed there when it changed something inside the editable scope).

A proposal is made from a :class:`Basis`: the state after some decision (for a generation, the one before it;
for a proposal made ahead by the pipeline, an earlier one), so what is proposed depends on the events only.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay.evaluation.evaluator import EvalResult
from assay.evaluation.traces import read_trace
from assay.history.git import Git
from assay.layer_names import layer_name
from assay.loop.context import LoopContext
from assay.loop.events import ProposalMade
from assay.loop.flags import Flag
from assay.loop.measure import OUTPUT_KEPT
from assay.loop.state import HistoryItem, LoopState, Retry
from assay.model import Case, Split
from assay.proposers.base import (
    CaseFailure,
    HistoryEntry,
    Proposal,
    ProposerView,
    RetryNote,
    Structure,
    Trial,
)
from assay.proposers.budget import default_context_tokens
from assay.proposers.context import build_view, describe_failure
from assay.proposers.redaction import Redactor
from assay.proposers.tune import search_space
from assay.search import Archive
from assay.search.archive import accuracy_ranks

HISTORY_SHOWN = 20
STRUCTURES_SHOWN = 4


@dataclass
class Basis:
    """What a proposal is made from: the state right after decision ``after`` (a copy)."""

    after: int
    archive: Archive
    layer: int
    history: list[HistoryItem]
    last_gate: list[str]
    best: str
    retry: Retry | None = None
    trials: list[Trial] = field(default_factory=list)

    @classmethod
    def of(cls, state: LoopState) -> Basis:
        assert state.lineage.best is not None
        return cls(
            after=state.lineage.generation,
            archive=copy.deepcopy(state.lineage.archive),
            layer=state.feedback.tracker.current,
            history=list(state.feedback.history[-HISTORY_SHOWN:]),
            last_gate=list(state.feedback.last_gate),
            best=state.lineage.best.commit,
            retry=state.feedback.retry,
            trials=list(state.feedback.trials),
        )


def choose_parent(ctx: LoopContext, basis: Basis, key: str) -> tuple[str, bool]:
    """The commit to build on and whether the search sampled it: the best candidate (greedy), or one the search
    strategy samples from the archive of every evaluated candidate (ranked, dgm), seeded by ``key``; the best
    while the run tidies before it stops."""
    if ctx.config.evolve.search == "greedy" or ctx.tidying is not None:
        return basis.best, False
    rng = random.Random(f"{ctx.config.evolve.seed}:{key}")
    return ctx.parts.selector.choose(basis.archive, rng), True


def priority(basis: Basis, parent: str) -> float:
    """A proposal's place in the pipeline's queue, lower first: its parent's rating rank plus accuracy rank
    (SIFT's r_bt + r_acc; the accuracy rank stands in for a parent never rated)."""
    acc = accuracy_ranks(basis.archive)[parent]
    rank = basis.archive.get(parent).bt_rank
    return float(acc + (acc if rank is None else rank))


async def make_proposal(
    ctx: LoopContext,
    state: LoopState,
    basis: Basis,
    *,
    worktree: Path,
    parent: str,
    number: int,
    label: str = "gen",
) -> ProposalMade:
    """One new proposal on top of ``parent`` in ``worktree``, committed there; ``number`` seeds the offline
    proposers and names the commit (``assay gen 12`` or ``assay proposal 12``).

    Never a candidate seen before: a draw whose fingerprint (formatting and comments ignored) equals that of
    any candidate proposed or measured so far is thrown away and drawn again, up to the proposer's
    ``redraws`` per layer; a layer where nothing applies, or where every draw repeated, gives way to the next
    one (then the earlier ones). Only when no layer gives anything new does the proposal fail. Which trees are
    "seen" depends on the events only: every proposal numbered before this one, and the measured ones."""
    config, git = ctx.config, ctx.git
    prefix = ctx.parts.prefix
    workdir = worktree / prefix if prefix else worktree
    git.reset_worktree(worktree, parent)
    artifact = ctx.artifact_texts(workdir)
    seen = set(state.pipeline.trees)
    view = _view(ctx, state, basis, artifact, parent, number, label)
    proposer = ctx.parts.proposer
    proposer.generation = number
    redrawn: list[str] = []
    shown_gate = list(view.last_gate)  # redacted by build_view
    tokens, cost = 0, 0.0
    made: Proposal | None = None
    for layer in _layer_order(config.evolve.layers, basis.layer):
        view.layer = layer
        for _attempt in range(max(1, proposer.redraws)):
            git.reset_worktree(worktree, parent)
            view.attempt = len(redrawn)
            view.last_gate = shown_gate + _repeat_note(redrawn)
            made = await proposer.propose(view, workdir, editable=list(config.artifact.paths))
            tokens, cost = tokens + made.tokens_in + made.tokens_out, cost + made.cost_usd
            if not made.ok:
                if made.exhausted:
                    redrawn.append(f"{layer_name(layer)}: {made.error}")
                    break
                return _failed(basis, parent, proposer.name, made, tokens, cost, redrawn)
            changed = Git(worktree).dirty_paths(ignore=())
            outside = out_of_scope_paths(ctx, changed)
            if outside:
                git.restore_paths(worktree, parent, outside)
            tree = ctx.tree(workdir)
            if tree in seen:
                redrawn.append(f"{layer_name(layer)} repeat: {made.description}")
                continue
            proposal = ProposalMade(
                parent=parent,
                layer=layer,
                proposer=made.via or proposer.name,
                description=made.description or made.error or "",
                citations=made.citations,
                tokens=tokens,
                cost_usd=cost,
                tree=tree,
                redrawn=redrawn,
                point=search_space(ctx.artifact_texts(workdir), config.evolve.parameters).point(),
            )
            return _commit(
                ctx, worktree, proposal, changed, outside, f"assay {label} {number} {layer_name(layer)}"
            )
    assert made is not None
    failed = _failed(basis, parent, proposer.name, made, tokens, cost, redrawn)
    failed.description = (
        "no new candidate: every layer's draws repeated earlier candidates or found nothing to change"
    )
    failed.flags.append(Flag.NO_NEW_CANDIDATE)
    return failed


def tidy_due(ctx: LoopContext, state: LoopState) -> bool:
    """Whether the proposer would tidy the best (:meth:`~assay.proposers.Proposer.tidies`), asked with the view
    the next proposal would get (the best as parent, at the current layer)."""
    basis = Basis.of(state)
    prefix = ctx.parts.prefix
    ctx.git.reset_worktree(ctx.worktree, basis.best)
    artifact = ctx.artifact_texts(ctx.worktree / prefix if prefix else ctx.worktree)
    number = state.lineage.generation + 1
    view = _view(ctx, state, basis, artifact, basis.best, number, "gen")
    view.tidying = True
    ctx.parts.proposer.generation = number
    return ctx.parts.proposer.tidies(view)


def _layer_order(layers: Sequence[int], current: int) -> list[int]:
    """The current layer, the later ones, then the earlier ones."""
    at = layers.index(current) if current in layers else 0
    return [*layers[at:], *layers[:at]]


def _repeat_note(redrawn: list[str]) -> list[str]:
    if not redrawn:
        return []
    return [
        f"your last {len(redrawn)} proposals repeated earlier candidates or changed nothing: propose something new"
    ]


def _view(
    ctx: LoopContext,
    state: LoopState,
    basis: Basis,
    artifact: dict[str, str],
    parent: str,
    number: int,
    label: str,
) -> ProposerView:
    config = ctx.config
    measurement = state.lineage.measurement(parent)
    dev = with_full_outputs(measurement.dev if measurement else None)
    cases = ctx.parts.cases[Split.DEV]
    redactor = ctx.parts.redactor
    settings = config.evolve.proposer
    prefix = ctx.parts.prefix
    view = build_view(
        artifact=artifact,
        layer=basis.layer,
        dev_results=list(zip(cases, dev.cases, strict=True)) if dev else [],
        history=[
            HistoryEntry(
                h.generation,
                h.description,
                h.decision,
                h.proposer,
                delta=h.delta,
                same_parent=h.parent == parent,
            )
            for h in basis.history
        ],
        last_gate=[redactor.redact(r) for r in basis.last_gate],
        redactor=redactor,
        trace_dir=ctx.files.run_dir / "proposer" / f"{label}-{number:03d}",
        show_judge_reasons=settings.show_judge_reasons,
        context_tokens=settings.context_tokens
        or default_context_tokens(settings.llm.model if settings.llm else None),
        regressed=regressed_cases(state, dev),
        best_diff=best_diff(ctx, state, basis, [f"{prefix}/{p}" if prefix else p for p in artifact]),
    )
    view.tidying = ctx.tidying is not None
    view.retry = retry_note(basis.retry, cases, redactor)
    point = search_space(artifact, config.evolve.parameters).point()
    here = [Trial(point, dev.mean_score, parent)] if dev else []
    view.trials = here + list(basis.trials)
    view.structures = structures(ctx, basis.trials, point.study)
    return view


def structures(
    ctx: LoopContext, trials: list[Trial], own: str, count: int = STRUCTURES_SHOWN
) -> list[Structure]:
    """The ``count`` best-scoring program structures evaluated so far other than ``own`` (the parent's), and the
    latest evaluated one (a structural edit's first values may score low), with the files of each one's best
    candidate. A structure none of whose trials measured differently from the incumbent comes after every other
    one: its score, a discard's told just below the incumbent's, is the best any discard can have, so a run's
    inert edits (a guard that never fires) would otherwise crowd out every structure that made a difference.
    For the same reason a structure's best candidate is its best one that measured differently from the
    incumbent, when it has one: a guard whose numbers were once tuned to where it never fires would otherwise be
    offered at those numbers, and tuned near them, ahead of every structure that made a difference."""
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
            ctx.files_at(t.commit),
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


def _failed(
    basis: Basis, parent: str, name: str, made: Proposal, tokens: int, cost: float, redrawn: list[str]
) -> ProposalMade:
    return ProposalMade(
        parent=parent,
        layer=basis.layer,
        proposer=made.via or name,
        description=f"proposal failed: {made.error}",
        citations=made.citations,
        tokens=tokens,
        cost_usd=cost,
        redrawn=redrawn,
    )


def _commit(
    ctx: LoopContext,
    worktree: Path,
    proposal: ProposalMade,
    changed: list[str],
    outside: list[str],
    title: str,
) -> ProposalMade:
    """Flag what the proposer did beyond its scope (restored already) and commit the change."""
    if outside:
        proposal.flags.append(Flag.SCOPE_VIOLATION)
        proposal.violations = outside
    if len(set(changed) - set(outside)) > ctx.config.evolve.max_files_changed:
        proposal.flags.append(Flag.MANY_FILES)
    proposal.commit = ctx.git.commit_all(
        worktree, f"{title} ({proposal.proposer}): {proposal.description}"[:200]
    )
    if proposal.commit is None:
        proposal.description = f"no change: {proposal.description}"
    return proposal


def with_full_outputs(dev: EvalResult | None) -> EvalResult | None:
    """``dev`` with each output the event log cut (to :data:`OUTPUT_KEPT` characters) read back whole from
    its trace file, so the proposer can be shown its end; an output whose trace is gone stays cut."""
    if dev is None:
        return None
    cases = []
    for result in dev.cases:
        if result.trace_path and len(result.output.text) >= OUTPUT_KEPT:
            try:
                output = read_trace(Path(result.trace_path)).result.output
            except (OSError, ValueError):
                output = result.output
            result = result.model_copy(update={"output": output})
        cases.append(result)
    return dev.model_copy(update={"cases": cases})


def regressed_cases(state: LoopState, dev: EvalResult | None) -> set[str]:
    """The dev cases the parent fails that the baseline passed."""
    base = state.lineage.baseline.dev if state.lineage.baseline is not None else None
    if dev is None or base is None:
        return set()
    passed = {r.id for r in base.cases if r.passed}
    return {r.id for r in dev.cases if not r.passed and r.id in passed}


def best_diff(ctx: LoopContext, state: LoopState, basis: Basis, paths: list[str]) -> str:
    """The best candidate's diff against the baseline over the artifact's files ('' when they are the same)."""
    if state.lineage.baseline is None or state.lineage.baseline.commit == basis.best or not paths:
        return ""
    return ctx.git.diff(state.lineage.baseline.commit, basis.best, paths)


def retry_note(retry: Retry | None, cases: list[Case], redactor: Redactor) -> RetryNote | None:
    """What the proposer is told of an attempt the gate asked to retry (failures described neutrally)."""
    if retry is None:
        return None
    results = {r.id: r for r in (retry.dev.cases if retry.dev else [])}
    failures = [
        CaseFailure(redactor.redact(case.id), redactor.redact(describe_failure(results[case.id], redactor)))
        for case in cases
        if case.id in results and not results[case.id].passed
    ]
    return RetryNote(score=retry.score, best_score=retry.best_score, needed=retry.needed, failures=failures)


def out_of_scope_paths(ctx: LoopContext, changed: list[str]) -> list[str]:
    """The changed paths outside the editable scope (or inside the read-only one)."""
    from assay.history.scope import out_of_scope

    artifact = ctx.config.artifact
    return out_of_scope(changed, artifact.paths, artifact.forbid, artifact_prefix=ctx.parts.prefix)
