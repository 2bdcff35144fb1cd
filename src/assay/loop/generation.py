"""One generation as small steps: propose (or take a proposal made ahead), measure (L1 + L2), gate, revert a kept
candidate's inert sites (:mod:`assay.loop.inert`), L3 when due, play the tournament, decide. Each step that
changes state emits its event; a step whose event is already in the log (a resumed generation) is not done again.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.config import OverfittingConfig
from assay.evaluation.evaluator import EvalResult
from assay.gates import GateInput
from assay.history.records import CandidateRecord, candidate_id
from assay.loop.announce import explain
from assay.loop.context import LoopContext
from assay.loop.events import (
    Committed,
    Decided,
    ExtraRuns,
    MatchesPlayed,
    Measured,
    Picked,
    ProposalMade,
    Proposed,
    Spend,
    Verified,
)
from assay.loop.flags import Flag, gate_flag
from assay.loop.inert import trim
from assay.loop.measure import Measurement, slim, verdicts
from assay.loop.overfitting import judge_overfitting
from assay.loop.pipeline import ProposalsAhead
from assay.loop.proposing import Basis, choose_parent, make_proposal
from assay.loop.rating import play_matches, play_screening
from assay.loop.state import LoopState, Pending
from assay.loop.state.lineage import Size, compared
from assay.model import Dimension, OverfitVerdict, Split
from assay.tournament import Contestant

PROBE_CASES = 3


@dataclass
class Judgement:
    """The gate's verdict on a candidate, with what the gate spent (reruns, the paired test's fresh runs)."""

    keep: bool
    gate: dict[str, Dimension]
    flags: list[str]
    regressions: list[str] = field(default_factory=list)
    extra: ExtraRuns = field(default_factory=ExtraRuns)
    spend: Spend = field(default_factory=Spend)
    gate_state: dict[str, Any] | None = None
    overfitting: OverfitVerdict | None = None  # L3's verdict, when L3 ran at the decision


@dataclass
class Prepared:
    """A generation's candidate taken and measured ahead of its turn (:mod:`assay.loop.parallel`), not yet
    logged: its proposal and its L2 measurement (None: the proposal made no commit)."""

    taken: Proposed
    measured: Measured | None


async def run_generation(
    ctx: LoopContext, state: LoopState, ahead: ProposalsAhead | None, prepared: Prepared | None = None
) -> CandidateRecord:
    """Run generation ``state.lineage.generation + 1`` to its decision and return the decided record (from its
    ``prepared`` candidate, when it was measured ahead)."""
    started = time.monotonic()
    generation = state.lineage.generation + 1
    pending = state.lineage.pending
    if pending is None or pending.committed.generation != generation:
        pending = await propose(ctx, state, generation, ahead, prepared)
        if pending is None:
            return state.lineage.records[-1]
        if prepared is not None and prepared.measured is not None:
            ctx.emit(state, prepared.measured)
    ctx.git.reset_worktree(ctx.worktree, pending.commit)
    if ctx.config.evolve.screening == "judge" and state.lineage.ratings is not None:
        if pending.screened is None:
            await screen(ctx, state, pending)
        if not beats_parent(state, pending):
            return decide_screened_out(ctx, state, pending, time.monotonic() - started)
    if pending.measured is None:
        await measure(ctx, state, generation, pending.commit)
    measurement = pending.measurement()
    rated = state.lineage.ratings is not None and measurement.dev is not None and not _screened_out(pending)
    played: tuple[MatchesPlayed, Spend] | None = None
    if rated and ctx.config.evolve.gate_input == "tournament" and measurement.dev is not None:
        # autocontext's wiring: the matches come first and their score feeds the gate.
        played = await matches(ctx, state, pending, measurement.dev)
    judgement = await judge(ctx, state, pending, played[0] if played else None)
    if judgement.keep and pending.trimmed is None:
        # What L3 measures and the decision keeps is the candidate without its inert sites.
        await trim(ctx, state, pending)
        measurement = pending.measurement()
    if judgement.keep and l3_due(ctx, generation, measurement):
        if pending.l3 is None:
            await measure_l3(ctx, state, generation, pending.commit)
            measurement = pending.measurement()
        judgement.keep = l3_holds(state, measurement, judgement, ctx.config.tiers.overfitting)
        if judgement.keep and ctx.config.tiers.l3_compare:
            judgement.keep = await l3_compare(ctx, state, pending, measurement, judgement)
    if rated and measurement.dev is not None:
        await play(ctx, state, pending, measurement.dev, judgement, played)
    record = decide(ctx, state, pending, judgement, time.monotonic() - started)
    if judgement.keep:
        ctx.git.set_branch(ctx.run.branch, pending.commit)
    return record


async def propose(
    ctx: LoopContext,
    state: LoopState,
    generation: int,
    ahead: ProposalsAhead | None,
    prepared: Prepared | None = None,
) -> Pending | None:
    """Make (or take, or log the ``prepared`` one) the generation's proposal and log it: ``committed``, or
    ``decided`` invalid when it made no commit (then None is returned)."""
    if ahead is not None:
        taken = prepared.taken if prepared is not None else await ahead.take(generation)
        proposal, sampled, spend = taken.proposal, True, Spend()  # its cost was logged when it was made
    else:
        basis = Basis.of(state)
        parent, sampled = choose_parent(ctx, basis, f"parent:{generation}")
        proposal = await make_proposal(
            ctx, state, basis, worktree=ctx.worktree, parent=parent, number=generation
        )
        spend = Spend(tokens=proposal.tokens, cost_usd=proposal.cost_usd)
    if proposal.commit is None:
        record = CandidateRecord(
            run_id=ctx.run.run_id,
            generation=generation,
            candidate_id=candidate_id(generation),
            parent=proposal.parent,
            layer=state.feedback.tracker.current,
            proposer=proposal.proposer,
            operator=proposal.operator,
            sites=list(proposal.sites),
            places=list(proposal.places),
            description=proposal.description,
            decision="invalid",
            tokens=proposal.tokens,
            cost_usd=proposal.cost_usd,
            flags=list(proposal.flags),
            citations=list(proposal.citations),
        )
        explain(ctx.git, record, ctx.report)
        ctx.emit(state, Decided(record=record, spent=spend, sampled=sampled, proposal=proposal.number))
        return None
    ctx.git.set_ref(f"refs/assay/{ctx.run.run_id}/{candidate_id(generation)}", proposal.commit)
    ctx.emit(state, Committed(generation=generation, proposal=proposal, sampled=sampled, spent=spend))
    return state.lineage.pending


def _screened_out(pending: Pending) -> bool:
    return pending.measured is not None and pending.measured.screened_out


def _spent(before: int, ctx: LoopContext, *results: EvalResult | None) -> Spend:
    done = [r for r in results if r is not None]
    return Spend(
        case_runs=ctx.parts.measurer.case_runs - before,
        tokens=sum(r.tokens for r in done),
        cost_usd=sum(r.cost_usd for r in done),
    )


async def measure(ctx: LoopContext, state: LoopState, generation: int, commit: str) -> None:
    """L1 static and, unless it found something critical, L2 on the dev cases of the worktree's commit."""
    ctx.emit(state, await l2_measurement(ctx, generation, commit, ctx.workdir))


async def l2_measurement(ctx: LoopContext, generation: int, commit: str, workdir: Path) -> Measured:
    """L1 static and, unless it found something critical, L2 on the dev cases of ``commit`` checked out at
    ``workdir``, as an event not yet logged (its case runs are its own, whatever else runs meanwhile)."""
    measurer = ctx.parts.measurer
    static = measurer.static(workdir)
    dev, screened_out = None, False
    if static.passed:
        traces = ctx.files.traces_dir(generation)
        if generation == 0:  # the baseline is measured whole
            dev = await measurer.split(Split.DEV, workdir, traces)
        else:
            dev, screened_out = await measurer.dev_screened(workdir, traces, probe(ctx, generation))
    identity = ctx.artifact_identity(workdir)
    return Measured(
        commit=commit,
        generation=generation,
        tier="L2",
        static=static,
        dev=slim(dev),
        size=identity.size,
        content_size=identity.content_size,
        content=identity.content,
        tree=identity.tree,
        screened_out=screened_out,
        spent=Spend.of(dev),
    )


def probe(ctx: LoopContext, generation: int) -> list[str]:
    """The dev cases L2 runs first (:data:`PROBE_CASES` of them, drawn per generation): if they all crash,
    the candidate is broken and the others are not run."""
    ids = [c.id for c in ctx.parts.cases[Split.DEV]]
    return random.Random(f"{ctx.config.evolve.seed}:probe:{generation}").sample(
        ids, min(PROBE_CASES, len(ids))
    )


async def l3_measurement(ctx: LoopContext, generation: int, commit: str) -> Measured:
    """L3 (the holdout and regression cases) of the worktree's commit, as an event not yet logged."""
    measurer, workdir = ctx.parts.measurer, ctx.workdir
    traces = ctx.files.traces_dir(generation)
    before = measurer.case_runs
    holdout = await measurer.split(Split.HOLDOUT, workdir, traces)
    regression = await measurer.split(Split.REGRESSION, workdir, traces)
    return Measured(
        commit=commit,
        generation=generation,
        tier="L3",
        holdout=slim(holdout),
        regression=slim(regression),
        spent=_spent(before, ctx, holdout, regression),
    )


async def measure_l3(ctx: LoopContext, state: LoopState, generation: int, commit: str) -> None:
    """L3 on the worktree's commit, logged."""
    ctx.emit(state, await l3_measurement(ctx, generation, commit))


async def judge(
    ctx: LoopContext, state: LoopState, pending: Pending, tournament: MatchesPlayed | None = None
) -> Judgement:
    """The gate on the measured candidate, against the best so far (on the ``tournament`` match scores instead
    of the dev means when the gate is fed by the tournament)."""
    measurement = pending.measurement()
    flags = list(pending.committed.proposal.flags)
    dev = measurement.dev
    if measurement.blocked or dev is None or pending.measured is None:
        found = {"critical": len(measurement.static.critical) if measurement.static else 0}
        critical = Dimension(passed=False, detail="critical L1 findings: not evaluated", numbers=found)
        return Judgement(False, {"structure": critical}, flags)
    if pending.measured.screened_out:
        broken = Dimension(
            passed=False,
            detail=f"the first {len(dev.cases)} dev cases all crashed, timed out or printed nothing:"
            " not evaluated further",
            numbers={"probe": [c.id for c in dev.cases]},
        )
        return Judgement(False, {"structure": broken}, [*flags, Flag.SCREENED_OUT])
    best, baseline = state.lineage.best, state.lineage.baseline
    assert best is not None and baseline is not None
    measurer = ctx.parts.measurer
    gate, paired = ctx.gate_for(state.spend.noise)
    extra = ExtraRuns()
    before = measurer.case_runs
    known = state.spend.runs.get(best.commit) or verdicts(best.dev)
    sampler = ctx.noise.gate_extra(best.commit, known, ctx.workdir, extra) if paired else None
    measured = pending.measured
    parent_size, candidate_size, size_unit = compared(best.size, Size(measured.size, measured.content_size))
    gate.restore(state.feedback.gate_state)
    decision = await gate.decide(
        GateInput(
            parent=best.dev,
            candidate=dev,
            baseline=baseline.dev,
            parent_static=best.measurement.static,
            candidate_static=measurement.static,
            parent_size=parent_size,
            candidate_size=candidate_size,
            size_unit=size_unit,
            rerun=lambda case_id, times: measurer.rerun(case_id, times, ctx.workdir),
            parent_id=best.commit,
            parent_runs=known if paired else None,
            sampler=sampler,
            unfixable=frozenset()
            if ctx.config.evolve.unfixable_in_progress
            else frozenset(state.watchers.suspects),
            scores=(state.lineage.best_tournament_score, tournament.score)
            if tournament is not None
            else None,
        )
    )
    if decision.action not in ("keep", "discard"):
        flags.append(gate_flag(decision.action))
    regression = decision.dimensions.get("regression")
    tokens, cost = ctx.noise.take_cost()
    return Judgement(
        keep=decision.keep,
        gate=dict(decision.dimensions),
        flags=flags,
        regressions=list(regression.numbers.get("regressed", [])) if regression else [],
        extra=extra,
        spend=Spend(case_runs=measurer.case_runs - before, tokens=tokens, cost_usd=cost),
        gate_state=gate.snapshot(),
    )


def l3_due(ctx: LoopContext, generation: int, measurement: Measurement) -> bool:
    """L3 runs on a kept candidate every ``l3_every`` generations and when its dev pass rate is high."""
    dev = measurement.dev
    return generation % ctx.parts.settings.l3_every == 0 or bool(
        dev and dev.pass_rate > ctx.config.tiers.l3_when_dev_above
    )


def l3_holds(
    state: LoopState, measurement: Measurement, judgement: Judgement, setting: OverfittingConfig
) -> bool:
    """L3: the regression split must not lose a case the best candidate passed; a holdout whose gain falls short
    of the dev gain by more than noise allows (``setting``'s rule) is flagged as overfitting."""
    assert state.lineage.best is not None and state.lineage.baseline is not None
    best_regression = (
        state.lineage.best.measurement.regression or state.lineage.baseline.measurement.regression
    )
    if measurement.regression and best_regression:
        before = {c.id for c in best_regression.cases if c.passed}
        lost = sorted(c.id for c in measurement.regression.cases if c.id in before and not c.passed)
        judgement.gate["l3_regression"] = Dimension(
            passed=not lost,
            # Count only: the detail reaches the next proposal, and regression cases are hidden from it.
            detail=f"the regression split lost {len(lost)} cases" if lost else "regression split holds",
            numbers={"lost": lost},
        )
        if lost:
            return False
    judgement.overfitting = judge_overfitting(state.lineage.baseline.measurement, measurement, setting)
    if judgement.overfitting is not None and judgement.overfitting.flagged:
        judgement.flags.append(Flag.OVERFITTING)
    return True


async def screen(ctx: LoopContext, state: LoopState, pending: Pending) -> None:
    """SIFT's judge-first ranking: the candidate, before any evaluation, against its parent and the best-rated
    candidates, judged on the files; the ratings take the outcomes."""
    assert state.lineage.ratings is not None
    event, calls, tokens, cost = await play_screening(
        state.lineage.ratings,
        candidate_id(pending.committed.generation),
        commit=pending.commit,
        parent=pending.committed.proposal.parent,
        judge=ctx.parts.pairwise_judge,
        read_files=ctx.files_at,
        file_cache=ctx.file_cache,
    )
    ctx.emit(
        state, event.model_copy(update={"spent": Spend(tokens=tokens, cost_usd=cost, judge_calls=calls)})
    )


def beats_parent(state: LoopState, pending: Pending) -> bool:
    """Whether the judge preferred the screened candidate to its parent: only then is it worth an evaluation
    (a candidate the judge finds no better would not be kept by a ratchet either). The other screening matches
    place it in the ratings, which ranked search reads."""
    screened = pending.screened
    if screened is None or state.lineage.ratings is None:
        return True
    parent = next(
        (cid for cid, c in state.lineage.ratings.commits.items() if c == pending.committed.proposal.parent),
        None,
    )
    against = [m for m in screened.matches if m.opponent == parent]
    return not against or against[0].won


def decide_screened_out(
    ctx: LoopContext, state: LoopState, pending: Pending, seconds: float
) -> CandidateRecord:
    """Log a candidate the judge ranked below its parent: discarded without a case run."""
    screened = pending.screened
    assert screened is not None and state.lineage.ratings is not None
    proposal = pending.committed.proposal
    record = CandidateRecord(
        run_id=ctx.run.run_id,
        generation=pending.committed.generation,
        candidate_id=candidate_id(pending.committed.generation),
        commit=pending.commit,
        parent=proposal.parent,
        layer=state.feedback.tracker.current,
        proposer=proposal.proposer,
        operator=proposal.operator,
        sites=list(proposal.sites),
        places=list(proposal.places),
        description=proposal.description,
        decision="discard",
        tokens=proposal.tokens + screened.spent.tokens,
        cost_usd=proposal.cost_usd + screened.spent.cost_usd,
        seconds=seconds,
        flags=[*proposal.flags, Flag.SCREENED_BY_JUDGE],
        citations=list(proposal.citations),
        gate={
            "screen": Dimension(
                passed=False,
                detail="the pairwise judge did not prefer it to its parent: not evaluated",
                numbers={"rating": screened.rating, "judge_calls": screened.spent.judge_calls},
            )
        },
    )
    explain(ctx.git, record, ctx.report)
    ctx.emit(state, Decided(record=record))
    return record


async def l3_compare(
    ctx: LoopContext, state: LoopState, pending: Pending, measurement: Measurement, judgement: Judgement
) -> bool:
    """Seed 001's blind A/B at L3: the pairwise judge compares the candidate with the best it would replace (on
    the holdout results, or the files, as the judge is set to look), under neutral labels; the candidate is kept
    unless the judge prefers the old best."""
    assert state.lineage.best is not None
    await verify_best(ctx, state)
    ctx.git.reset_worktree(ctx.worktree, pending.commit)
    best = state.lineage.best
    new = Contestant("new", ctx.files_at(pending.commit), measurement.holdout or measurement.dev)
    old = Contestant("old", ctx.files_at(best.commit), best.measurement.holdout or best.dev)
    verdict = await ctx.parts.pairwise_judge.compare(new, old, round=pending.committed.generation)
    worse = verdict.winner == "old"
    judgement.gate["l3_compare"] = Dimension(
        passed=not worse,
        detail="the blind comparison preferred the current best" if worse else "the blind comparison holds",
        numbers={"winner": verdict.winner, "votes": verdict.votes, "judge_calls": verdict.calls},
    )
    judgement.spend = judgement.spend + Spend(
        tokens=verdict.tokens, cost_usd=verdict.cost_usd, judge_calls=verdict.calls
    )
    return not worse


async def matches(
    ctx: LoopContext, state: LoopState, pending: Pending, dev: EvalResult
) -> tuple[MatchesPlayed, Spend]:
    """The candidate's matches, played but not logged (a resumed generation gets the logged ones back)."""
    assert state.lineage.ratings is not None
    if pending.matches is not None:
        return pending.matches, Spend()
    event, calls, tokens, cost = await play_matches(
        state.lineage.ratings,
        candidate_id(pending.committed.generation),
        dev,
        False,
        commit=pending.commit,
        judge=ctx.parts.pairwise_judge,
        read_files=ctx.files_at,
        file_cache=ctx.file_cache,
    )
    return event, Spend(tokens=tokens, cost_usd=cost, judge_calls=calls)


async def play(
    ctx: LoopContext,
    state: LoopState,
    pending: Pending,
    dev: EvalResult,
    judgement: Judgement,
    played: tuple[MatchesPlayed, Spend] | None = None,
) -> None:
    """Log the candidate's tournament matches (once: a resumed generation reuses the logged ones). Under a
    tournament-fed gate or against the self-play pool (seed 000: only an advance keeps its Elo) only a kept
    candidate's matches change the ratings."""
    if pending.matches is None:
        event, spend = played or await matches(ctx, state, pending, dev)
        evolve = ctx.config.evolve
        only_kept = evolve.gate_input == "tournament" or evolve.tournament.opponents == "pool"
        rated = judgement.keep or not only_kept
        ctx.emit(state, event.model_copy(update={"kept": judgement.keep, "rated": rated, "spent": spend}))
    logged = pending.matches
    assert logged is not None
    judgement.gate["tournament"] = Dimension(
        passed=True,
        detail=f"rating {logged.rating:.0f}, baseline win rate {logged.baseline_win_rate:.2f}, "
        f"match score {logged.score:.3f}",
        numbers={
            "rating": logged.rating,
            "uncertainty": logged.uncertainty,
            "baseline_win_rate": logged.baseline_win_rate,
            "score": logged.score,
            "rated": logged.rated,
            "judge_calls": logged.spent.judge_calls,
        },
    )


def decide(
    ctx: LoopContext, state: LoopState, pending: Pending, judgement: Judgement, seconds: float
) -> CandidateRecord:
    """Log the decision on the candidate (its record, its costs, the gate's numbers)."""
    assert state.lineage.best is not None
    proposal: ProposalMade = pending.committed.proposal
    measurement = pending.measurement()
    generation = pending.committed.generation
    record = measurement.to_record(
        run_id=ctx.run.run_id,
        generation=generation,
        commit=pending.commit,
        parent=proposal.parent,
        layer=state.feedback.tracker.current,
        proposer=proposal.proposer,
        operator=proposal.operator,
        sites=list(proposal.sites),
        places=list(proposal.places),
        description=proposal.description,
        decision="keep" if judgement.keep else "discard",
        seconds=seconds,
        parent_dev=state.lineage.best.measurement.dev,
    )
    matches = pending.matches.spent if pending.matches else Spend()
    record.tokens += proposal.tokens + judgement.spend.tokens + matches.tokens
    record.cost_usd += proposal.cost_usd + judgement.spend.cost_usd + matches.cost_usd
    record.gate, record.regressions, record.flags = judgement.gate, judgement.regressions, judgement.flags
    record.overfitting = judgement.overfitting
    record.citations = list(proposal.citations)
    dev = measurement.dev
    record.evidence = [c.trace_path for c in (dev.cases if dev else []) if not c.passed and c.trace_path][:20]
    explain(ctx.git, record, ctx.report)
    ctx.emit(
        state,
        Decided(
            record=record, extra_runs=judgement.extra, spent=judgement.spend, gate_state=judgement.gate_state
        ),
    )
    return record


def pick_by_rating(ctx: LoopContext, state: LoopState) -> None:
    """SIFT's final pick (``evolve.final_pick: rating``): the best becomes the kept candidate rated highest."""
    if ctx.config.evolve.final_pick != "rating" or state.watchers.finished is not None:
        return
    top = state.lineage.top_rated_kept()
    assert state.lineage.best is not None
    if top is None or top[0].candidate_id == state.lineage.best.record.candidate_id:
        return
    record, rating = top
    assert record.commit is not None
    ctx.emit(
        state,
        Picked(
            candidate_id=record.candidate_id,
            commit=record.commit,
            rating=rating,
            replaced=state.lineage.best.record.candidate_id,
        ),
    )


async def verify_best(ctx: LoopContext, state: LoopState) -> float | None:
    """L3 on the best candidate unless it already ran; its holdout score."""
    best = state.lineage.best
    assert best is not None
    if best.measurement.holdout is None and has_l3(ctx):
        ctx.git.reset_worktree(ctx.worktree, best.commit)
        measured = await l3_measurement(ctx, best.record.generation, best.commit)
        assert state.lineage.baseline is not None
        verdict = judge_overfitting(
            state.lineage.baseline.measurement,
            Measurement(dev=best.measurement.dev, holdout=measured.holdout),
            ctx.config.tiers.overfitting,
        )
        ctx.emit(
            state,
            Verified(
                candidate_id=best.record.candidate_id,
                commit=best.commit,
                holdout=measured.holdout,
                regression=measured.regression,
                overfitting=verdict,
                spent=measured.spent,
            ),
        )
    holdout = best.measurement.holdout
    return holdout.mean_score if holdout else None


def has_l3(ctx: LoopContext) -> bool:
    """Whether the project has holdout or regression cases (else L3 has nothing to run)."""
    return bool(ctx.parts.cases[Split.HOLDOUT] or ctx.parts.cases[Split.REGRESSION])
