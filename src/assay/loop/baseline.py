"""The baseline: generation 0, measured on L1, L2 and L3, and its dev cases run again to estimate noise. Steps
already in the log (a run killed during its baseline) are not done again."""

from __future__ import annotations

from assay.history.reasons import reason_of
from assay.loop.context import LoopContext
from assay.loop.events import Decided, NoiseMeasured, Spend
from assay.loop.generation import has_l3, measure, measure_l3
from assay.loop.noise import baseline_runs
from assay.loop.state import LoopState


async def measure_baseline(ctx: LoopContext, state: LoopState) -> None:
    """Measure the run's base commit on every split, estimate noise, and log its record."""
    base = ctx.run.base_commit
    ctx.git.reset_worktree(ctx.worktree, base)
    known = state.lineage.measurements.get(base)
    if known is None or (known.static is None and known.dev is None):
        await measure(ctx, state, 0, base)
    measurement = state.lineage.measurements[base]
    if measurement.holdout is None and measurement.regression is None and has_l3(ctx):
        await measure_l3(ctx, state, 0, base)
    measurement = state.lineage.measurements[base]
    if measurement.dev is not None and base not in state.spend.runs:
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
        layer=state.feedback.tracker.current,
        proposer="baseline",
        description="baseline",
        decision="baseline",
        seconds=0.0,
        parent_dev=None,
    )
    record.tokens += state.spend.noise_spent.tokens
    record.cost_usd += state.spend.noise_spent.cost_usd
    record.reason = reason_of(record)
    ctx.emit(state, Decided(record=record))
