"""The baseline (generation 0: L1, L2, L3 and the repeated runs that estimate noise) and the L3 check of the
best candidate that comes before a layer promotion and at the end of a run. Steps already in the log (a run
killed during its baseline) are not done again."""

from __future__ import annotations

from assay.loop.context import LoopContext
from assay.loop.events import Decided, NoiseMeasured, Spend, Verified
from assay.loop.generation import l3_measurement, measure, measure_l3
from assay.loop.noise import baseline_runs
from assay.loop.state import LoopState
from assay.model import Split


async def measure_baseline(ctx: LoopContext, state: LoopState) -> None:
    """Measure the run's base commit on every split, estimate noise, and log its record."""
    base = ctx.run.base_commit
    ctx.git.reset_worktree(ctx.worktree, base)
    known = state.measurements.get(base)
    if known is None or (known.static is None and known.dev is None):
        await measure(ctx, state, 0, base)
    measurement = state.measurements[base]
    if measurement.holdout is None and measurement.regression is None and _has_l3(ctx):
        await measure_l3(ctx, state, 0, base)
    measurement = state.measurements[base]
    if measurement.dev is not None and base not in state.runs:
        times = baseline_runs(ctx.config, ctx.parts.cases)
        before = ctx.parts.measurer.case_runs
        runs = await ctx.noise.baseline(measurement.dev, ctx.workdir, times)
        tokens, cost = ctx.noise.take_cost()
        spent = Spend(case_runs=ctx.parts.measurer.case_runs - before, tokens=tokens, cost_usd=cost)
        ctx.emit(state, NoiseMeasured(commit=base, runs=runs, runs_per_case=times, spent=spent))
    record = measurement.to_record(
        run_id=ctx.run.run_id,
        generation=0,
        commit=base,
        parent=None,
        layer=state.tracker.current,
        proposer="baseline",
        description="baseline",
        decision="baseline",
        seconds=0.0,
        parent_dev=None,
    )
    record.tokens += state.noise_spent.tokens
    record.cost_usd += state.noise_spent.cost_usd
    ctx.emit(state, Decided(record=record))


def _has_l3(ctx: LoopContext) -> bool:
    return bool(ctx.parts.cases[Split.HOLDOUT] or ctx.parts.cases[Split.REGRESSION])


async def verify_best(ctx: LoopContext, state: LoopState) -> float | None:
    """L3 on the best candidate unless it already ran; its holdout score."""
    best = state.best
    assert best is not None
    if best.measurement.holdout is None and _has_l3(ctx):
        ctx.git.reset_worktree(ctx.worktree, best.commit)
        measured = await l3_measurement(ctx, best.record.generation, best.commit)
        ctx.emit(
            state,
            Verified(
                candidate_id=best.record.candidate_id,
                commit=best.commit,
                holdout=measured.holdout,
                regression=measured.regression,
                spent=measured.spent,
            ),
        )
    holdout = best.measurement.holdout
    return holdout.mean_score if holdout else None
