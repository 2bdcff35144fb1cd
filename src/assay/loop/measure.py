"""Measuring a candidate: the L1 static tier and the case evaluations, with one runner and judge reused
across generations."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from assay.config import AssayConfig
from assay.evaluation.evaluator import EvalResult
from assay.evaluation.executor import ExecutorProtocol
from assay.evaluation.session import build_evaluator, static_report
from assay.history.records import CandidateRecord, Decision, candidate_id
from assay.llm.base import RUN_INDEX
from assay.model import Case, CaseResult, Split
from assay.runners.base import RunnerProtocol
from assay.static.report import StaticReport

OUTPUT_KEPT = 2000  # characters of each output kept in the event log (the trace file has all of it)


def slim(result: EvalResult | None) -> EvalResult | None:
    """``result`` as the event log keeps it: every verdict, score, timing and trace path, and each output's
    text and tails cut to their first :data:`OUTPUT_KEPT` characters (the trace file holds them whole)."""
    if result is None:
        return None
    cases = []
    for case in result.cases:
        output = case.output.model_copy(
            update={
                "text": case.output.text[:OUTPUT_KEPT],
                "stdout_tail": case.output.stdout_tail[-OUTPUT_KEPT:],
                "stderr_tail": case.output.stderr_tail[-OUTPUT_KEPT:],
                "meta": {},
            }
        )
        cases.append(case.model_copy(update={"output": output}))
    return result.model_copy(update={"cases": cases})


def verdicts(result: EvalResult | None) -> dict[str, list[float]]:
    """One run per case: 1.0 for a pass, 0.0 for a failure."""
    return {c.id: [1.0 if c.passed else 0.0] for c in (result.cases if result else [])}


def crashed(dev: EvalResult | None) -> bool:
    """Not evaluated (L1 stopped it), or every case crashed, timed out or printed nothing."""
    return dev is None or all(not c.output.ok or not c.output.text.strip() for c in dev.cases)


@dataclass
class Measurement:
    """One candidate measured: its L1 report and its results per split (None: not run)."""

    static: StaticReport | None = None
    dev: EvalResult | None = None
    holdout: EvalResult | None = None
    regression: EvalResult | None = None

    @property
    def blocked(self) -> bool:
        return self.static is not None and not self.static.passed

    def to_record(
        self,
        *,
        run_id: str,
        generation: int,
        commit: str | None,
        parent: str | None,
        layer: int,
        proposer: str,
        description: str,
        decision: Decision,
        seconds: float,
        parent_dev: EvalResult | None,
        operator: str = "",
        sites: list[str] | None = None,
        places: list[str] | None = None,
    ) -> CandidateRecord:
        """The candidate record of this measurement (scores per split, delta against the parent's dev score)."""
        dev, holdout, regression = self.dev, self.holdout, self.regression
        results = [r for r in (dev, holdout, regression) if r is not None]
        return CandidateRecord(
            run_id=run_id,
            generation=generation,
            candidate_id=candidate_id(generation),
            commit=commit,
            parent=parent,
            layer=layer,
            proposer=proposer,
            operator=operator,
            sites=list(sites or []),
            places=list(places or []),
            description=description,
            decision=decision,
            dev_score=dev.mean_score if dev else None,
            dev_pass_rate=dev.pass_rate if dev else None,
            holdout_score=holdout.mean_score if holdout else None,
            regression_pass_rate=regression.pass_rate if regression else None,
            delta=(dev.mean_score - parent_dev.mean_score) if dev and parent_dev else None,
            tokens=sum(r.tokens for r in results),
            cost_usd=sum(r.cost_usd for r in results),
            seconds=seconds,
        )


class Measurer:
    """Runs the tiers on a work directory (the candidate's worktree, at the artifact root)."""

    def __init__(
        self,
        config: AssayConfig,
        cases: dict[Split, list[Case]],
        *,
        use_cache: bool = True,
        judge_votes: int = 3,
        runner: RunnerProtocol | str | None = None,
        executor: ExecutorProtocol | str | None = None,
        checks: Mapping[str, object] | None = None,
    ) -> None:
        self.config = config
        self.cases = cases
        everything = [(c, s) for s, group in cases.items() for c in group]
        self.evaluator = build_evaluator(
            config,
            everything,
            use_cache=use_cache,
            judge_votes=judge_votes,
            runner=runner,
            executor=executor,
            checks=checks,
        )
        self.case_runs = 0
        self.batch = (0, 0)  # (done, total) of the evaluation in progress, for progress lines

    def static(self, workdir: Path) -> StaticReport:
        return static_report(self.config, workdir)

    async def split(
        self,
        split: Split,
        workdir: Path,
        trace_dir: Path | None,
        *,
        run_index: int = 0,
        only: Collection[str] | None = None,
    ) -> EvalResult | None:
        """Every case of ``split`` (or the ones whose ids are in ``only``), once; ``run_index`` numbers repeated
        runs (models draw a fresh sample)."""
        cases = [c for c in self.cases.get(split) or [] if only is None or c.id in only]
        if not cases:
            return None
        self.case_runs += len(cases)
        self.batch = (0, len(cases))
        token = RUN_INDEX.set(run_index)
        try:
            return await self.evaluator.run(
                [(c, split) for c in cases], workdir, trace_dir=trace_dir, on_result=self._one_done
            )
        finally:
            RUN_INDEX.reset(token)

    def _one_done(self, _result: CaseResult) -> None:
        done, total = self.batch
        self.batch = (done + 1, total)

    async def dev_screened(
        self, workdir: Path, trace_dir: Path | None, probe: Collection[str]
    ) -> tuple[EvalResult | None, bool]:
        """The dev cases, the ``probe`` ones first: when every probe case crashes, times out or prints nothing,
        the rest are not run (a broken candidate costs a few case runs). Returns the results (all of them, in
        case order, or the probe's) and whether the probe stopped the evaluation."""
        first = await self.split(Split.DEV, workdir, trace_dir, only=probe)
        if first is None or all(not c.output.ok or not c.output.text.strip() for c in first.cases):
            return first, first is not None
        ids = {c.id for c in self.cases[Split.DEV]} - set(probe)
        rest = await self.split(Split.DEV, workdir, trace_dir, only=ids) if ids else None
        found = {c.id: c for c in [*first.cases, *(rest.cases if rest else [])]}
        return (
            EvalResult(
                cases=[found[c.id] for c in self.cases[Split.DEV]],
                duration_s=first.duration_s + (rest.duration_s if rest else 0.0),
                trace_dir=first.trace_dir,
            ),
            False,
        )

    async def run_case(self, case_id: str, workdir: Path, *, run_index: int) -> CaseResult:
        """Run ``run_index`` of one dev case (no trace file): the paired gate's fresh runs."""
        case = next(c for c in self.cases[Split.DEV] if c.id == case_id)
        self.case_runs += 1
        token = RUN_INDEX.set(run_index)
        try:  # through the executor, so a cluster runs the reruns too
            return (await self.evaluator.run([(case, Split.DEV)], workdir)).cases[0]
        finally:
            RUN_INDEX.reset(token)

    async def rerun(self, case_id: str, times: int, workdir: Path) -> int:
        """Run one dev case ``times`` more times (runs 1..times: fresh model samples, not the cached first
        answer); return how many runs passed (the strict gate's noise rule)."""
        passes = 0
        for run in range(1, times + 1):
            passes += (await self.run_case(case_id, workdir, run_index=run)).passed
        return passes

    async def aclose(self) -> None:
        await self.evaluator.aclose()
