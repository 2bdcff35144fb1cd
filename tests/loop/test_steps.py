"""The generation's steps one at a time, on a real project: each emits its event, and a step whose event is
already logged is not done again."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.aio import run_sync
from assay.config import OverfittingConfig
from assay.evaluation.evaluator import EvalResult
from assay.loop.baseline import measure_baseline
from assay.loop.events import Committed, Decided, Measured
from assay.loop.generation import Judgement, judge, l3_holds, measure, propose, run_generation
from assay.model import CaseResult, Dimension, Output, Split
from assay.proposers import Proposal, Proposer, ProposerView

from .conftest import git

# The loop's decisions are under test here, not the subprocess or the jail (tests/loop/test_engine.py).
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("inprocess_runner")]


def events_of(ctx) -> list[str]:  # type: ignore[no-untyped-def]
    return [type(e).__name__ for e in ctx.log.events()]


def test_the_baseline_and_a_generation_step_by_step(loop_context) -> None:  # type: ignore[no-untyped-def]
    ctx, state = loop_context
    run_sync(measure_baseline(ctx, state))
    assert events_of(ctx) == ["Started", "Measured", "Measured", "NoiseMeasured", "Decided"]
    dev_cases = len(ctx.parts.cases[Split.DEV])
    assert state.spend.spent.case_runs == dev_cases + 3  # dev once, then holdout and regression

    pending = run_sync(propose(ctx, state, 1, None))
    assert pending is not None and isinstance(pending.committed, Committed)
    commit = pending.commit
    assert git(ctx.parts.git.root, "rev-parse", "refs/assay/r1/cand-0001") == commit
    assert not pending.committed.sampled  # greedy search builds on the best without sampling

    before = state.spend.spent.case_runs
    run_sync(measure(ctx, state, 1, commit))
    measured = pending.measured
    assert isinstance(measured, Measured) and measured.tier == "L2" and measured.dev is not None
    assert state.spend.spent.case_runs - before == dev_cases and measured.content and measured.size > 0

    record = run_sync(run_generation(ctx, state, None))  # resumes the pending generation: no new measuring
    assert record.generation == 1 and record.commit == commit
    assert state.spend.spent.case_runs - before == dev_cases
    assert events_of(ctx)[-1] == "Decided" and state.lineage.pending is None


class Failing(Proposer):
    name = "failing"

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        return Proposal(ok=False, description="", error="nothing to try")


def test_a_failed_proposal_is_decided_invalid_without_a_commit(loop_context) -> None:  # type: ignore[no-untyped-def]
    ctx, state = loop_context
    run_sync(measure_baseline(ctx, state))
    ctx.parts.proposer = Failing()
    assert run_sync(propose(ctx, state, 1, None)) is None
    decided = ctx.log.events()[-1]
    assert isinstance(decided, Decided) and decided.record.decision == "invalid"
    assert decided.record.description == "proposal failed: nothing to try" and state.lineage.generation == 1


def test_a_blocked_candidate_fails_structure_without_the_gate(loop_context) -> None:  # type: ignore[no-untyped-def]
    ctx, state = loop_context
    run_sync(measure_baseline(ctx, state))
    pending = run_sync(propose(ctx, state, 1, None))
    assert pending is not None
    (ctx.workdir / "priority.py").write_text("AWS_SECRET_ACCESS_KEY = 'AKIAIOSFODNN7EXAMPLE'\n")
    run_sync(measure(ctx, state, 1, pending.commit))
    verdict = run_sync(judge(ctx, state, pending))
    assert not verdict.keep and set(verdict.gate) == {"structure"} and verdict.spend.case_runs == 0


def result(split: Split, *passed: bool) -> EvalResult:
    return EvalResult(
        cases=[
            CaseResult(id=f"{split.value}{i}", split=split, passed=p, score=float(p), output=Output())
            for i, p in enumerate(passed)
        ]
    )


def test_l3_discards_a_lost_regression_case_and_flags_overfitting(loop_context) -> None:  # type: ignore[no-untyped-def]
    from assay.loop.measure import Measurement

    ctx, state = loop_context
    run_sync(measure_baseline(ctx, state))
    assert state.lineage.best is not None and state.lineage.baseline is not None
    setting = ctx.config.tiers.overfitting
    assert setting.rule == "paired"
    state.lineage.best.measurement.regression = result(Split.REGRESSION, True, False)
    lost = Judgement(True, {}, [])
    candidate = Measurement(dev=result(Split.DEV, True), regression=result(Split.REGRESSION, False, True))
    assert not l3_holds(state, candidate, lost, setting)
    assert lost.gate["l3_regression"] == Dimension(
        passed=False, detail="the regression split lost 1 cases", numbers={"lost": ["regression0"]}
    )
    # Against the baseline on the same cases: it failed all 8 dev and 4 holdout cases; the candidate passes
    # every dev case and no holdout case (one split in C(12, 4) = 495 puts the 8 gains all on dev).
    state.lineage.baseline.measurement.dev = result(Split.DEV, *[False] * 8)
    state.lineage.baseline.measurement.holdout = result(Split.HOLDOUT, *[False] * 4)
    overfit = Judgement(True, {}, [])
    candidate = Measurement(
        dev=result(Split.DEV, *[True] * 8),
        holdout=result(Split.HOLDOUT, *[False] * 4),
        regression=result(Split.REGRESSION, True, True),
    )
    assert l3_holds(state, candidate, overfit, setting) and overfit.flags == ["overfitting"]
    assert overfit.overfitting is not None and overfit.overfitting.numbers["pass_rate"]["p"] == 1 / 495
    # Half the holdout passes too: a gain on both splits, within noise of each other.
    general = Judgement(True, {}, [])
    candidate.holdout = result(Split.HOLDOUT, True, True, False, False)
    assert l3_holds(state, candidate, general, setting) and general.flags == []
    assert general.overfitting is not None and not general.overfitting.flagged
    # The seed's rule, as a setting: 0.5 on holdout is more than 0.15 below 1.0 on dev.
    gap = Judgement(True, {}, [])
    assert l3_holds(state, candidate, gap, OverfittingConfig(rule="gap")) and gap.flags == ["overfitting"]
    assert gap.overfitting is not None and gap.overfitting.rule == "gap"


def test_l3s_blind_comparison_keeps_a_candidate_only_if_the_judge_does_not_prefer_the_best(
    loop_context,
) -> None:  # type: ignore[no-untyped-def]
    from assay.loop.generation import l3_compare
    from assay.loop.measure import Measurement

    ctx, state = loop_context
    run_sync(measure_baseline(ctx, state))
    pending = run_sync(propose(ctx, state, 1, None))
    assert pending is not None and state.lineage.best is not None
    holdout = state.lineage.best.measurement.holdout
    assert holdout is not None and holdout.cases
    ids = [c.id for c in holdout.cases]
    worse = Measurement(dev=result(Split.DEV, True), holdout=scored(Split.HOLDOUT, ids, 0.0))
    verdict = Judgement(True, {}, [])
    assert not run_sync(l3_compare(ctx, state, pending, worse, verdict))
    assert verdict.gate["l3_compare"].detail == "the blind comparison preferred the current best"
    better = Measurement(dev=result(Split.DEV, True), holdout=scored(Split.HOLDOUT, ids, 1.0))
    assert run_sync(l3_compare(ctx, state, pending, better, Judgement(True, {}, [])))


def scored(split: Split, ids: list[str], score: float) -> EvalResult:
    return EvalResult(
        cases=[CaseResult(id=i, split=split, passed=score == 1.0, score=score, output=Output()) for i in ids]
    )


def test_one_read_gives_the_size_the_content_hash_and_the_same_fingerprint_as_the_texts(loop_context) -> None:  # type: ignore[no-untyped-def]
    ctx, _ = loop_context
    priority = ctx.worktree / "priority.py"
    priority.write_bytes(priority.read_bytes().replace(b"\n", b"\r\n") + b"# \xff\r\n")
    identity = ctx.artifact_identity(ctx.worktree)
    assert identity.size == priority.stat().st_size
    assert identity.tree == ctx.tree(ctx.worktree)  # as the proposer's draws are fingerprinted
    priority.write_bytes(priority.read_bytes() + b" ")
    again = ctx.artifact_identity(ctx.worktree)
    assert again.content != identity.content  # the exact bytes changed...
    assert again.content_size == identity.content_size  # ...but not what the file says
