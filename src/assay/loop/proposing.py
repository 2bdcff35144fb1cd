"""The proposing steps of a generation: building the configured proposer, choosing the parent, and making one
proposal on top of it in a worktree (committed there when it changed something inside the editable scope).

A proposal is made from a :class:`Basis`: the state after some decision (for a generation, the one before it;
for a proposal made ahead by the pipeline, an earlier one), so what is proposed depends on the events only.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from pathlib import Path

from assay.evaluation.evaluator import EvalResult
from assay.evaluation.traces import read_trace
from assay.history.git import Git
from assay.loop.context import LoopContext
from assay.loop.events import ProposalMade
from assay.loop.measure import OUTPUT_KEPT
from assay.loop.state import HistoryItem, LoopState, Retry
from assay.model import Case, Split
from assay.proposers import MutateProposer
from assay.proposers.base import RetryNote
from assay.proposers.budget import default_context_tokens
from assay.proposers.context import build_view, describe_failure
from assay.proposers.redaction import Redactor
from assay.search import Archive
from assay.search.archive import accuracy_ranks

HISTORY_SHOWN = 20


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

    @classmethod
    def of(cls, state: LoopState) -> Basis:
        assert state.best is not None
        return cls(
            after=state.generation,
            archive=copy.deepcopy(state.archive),
            layer=state.tracker.current,
            history=list(state.history[-HISTORY_SHOWN:]),
            last_gate=list(state.last_gate),
            best=state.best.commit,
            retry=state.retry,
        )


def choose_parent(ctx: LoopContext, basis: Basis, key: str) -> tuple[str, bool]:
    """The commit to build on and whether the search sampled it: the best candidate (greedy), or one the search
    strategy samples from the archive of every evaluated candidate (ranked, dgm), seeded by ``key``."""
    if ctx.config.evolve.search == "greedy":
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
    """One proposal on top of ``parent`` in ``worktree``, committed there; ``number`` seeds the mutate proposer
    and names the commit (``assay gen 12`` or ``assay proposal 12``)."""
    config, git = ctx.config, ctx.git
    prefix = ctx.parts.prefix
    workdir = worktree / prefix if prefix else worktree
    git.reset_worktree(worktree, parent)
    paths = ctx.artifact_paths(workdir)
    measurement = state.measurement(parent)
    dev = with_full_outputs(measurement.dev if measurement else None)
    cases = ctx.parts.cases[Split.DEV]
    redactor = ctx.parts.redactor
    settings = config.evolve.proposer
    view = build_view(
        artifact={p: (workdir / p).read_text(encoding="utf-8", errors="replace") for p in paths},
        layer=basis.layer,
        dev_results=list(zip(cases, dev.cases, strict=True)) if dev else [],
        history=[
            {
                "generation": h.generation,
                "description": h.description,
                "decision": h.decision,
                "delta": h.delta,
                "same_parent": h.parent == parent,
            }
            for h in basis.history
        ],
        last_gate=[redactor.redact(r) for r in basis.last_gate],
        redactor=redactor,
        trace_dir=ctx.files.run_dir / "proposer" / f"{label}-{number:03d}",
        show_judge_reasons=settings.show_judge_reasons,
        context_tokens=settings.context_tokens
        or default_context_tokens(settings.llm.model if settings.llm else None),
        regressed=regressed_cases(state, dev),
        best_diff=best_diff(ctx, state, basis, [f"{prefix}/{p}" if prefix else p for p in paths]),
    )
    view.retry = retry_note(basis.retry, cases, redactor)
    proposer = ctx.parts.proposer
    if isinstance(proposer, MutateProposer):
        proposer.generation = number
    made = await proposer.propose(view, workdir, editable=list(config.artifact.paths))
    proposal = ProposalMade(
        parent=parent,
        layer=basis.layer,
        proposer=proposer.name,
        description=made.description or made.error or "",
        citations=made.citations,
        tokens=made.tokens_in + made.tokens_out,
        cost_usd=made.cost_usd,
    )
    if not made.ok:
        proposal.description = f"proposal failed: {made.error}"
        return proposal
    changed = Git(worktree).dirty_paths(ignore=())
    outside = out_of_scope_paths(ctx, changed)
    if outside:
        git.restore_paths(worktree, parent, outside)
        proposal.flags.append("scope-violation")
        proposal.violations = outside
    if len(set(changed) - set(outside)) > config.evolve.max_files_changed:
        proposal.flags.append("many-files")
    message = f"assay {label} {number} L{basis.layer} ({proposer.name}): {proposal.description}"[:200]
    proposal.commit = git.commit_all(worktree, message)
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
    base = state.baseline.dev if state.baseline is not None else None
    if dev is None or base is None:
        return set()
    passed = {r.id for r in base.cases if r.passed}
    return {r.id for r in dev.cases if not r.passed and r.id in passed}


def best_diff(ctx: LoopContext, state: LoopState, basis: Basis, paths: list[str]) -> str:
    """The best candidate's diff against the baseline over the artifact's files ('' when they are the same)."""
    if state.baseline is None or state.baseline.commit == basis.best or not paths:
        return ""
    return ctx.git.diff(state.baseline.commit, basis.best, paths)


def retry_note(retry: Retry | None, cases: list[Case], redactor: Redactor) -> RetryNote | None:
    """What the proposer is told of an attempt the gate asked to retry (failures described neutrally)."""
    if retry is None:
        return None
    results = {r.id: r for r in (retry.dev.cases if retry.dev else [])}
    failures = [
        {"id": redactor.redact(case.id), "how": redactor.redact(describe_failure(results[case.id], redactor))}
        for case in cases
        if case.id in results and not results[case.id].passed
    ]
    return RetryNote(score=retry.score, best_score=retry.best_score, needed=retry.needed, failures=failures)


def out_of_scope_paths(ctx: LoopContext, changed: list[str]) -> list[str]:
    """The changed paths outside the editable scope (or inside the read-only one)."""
    from assay.history.scope import out_of_scope

    artifact = ctx.config.artifact
    return out_of_scope(changed, artifact.paths, artifact.forbid, artifact_prefix=ctx.parts.prefix)
