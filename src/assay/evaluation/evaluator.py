"""The L2/L3 evaluator: run every selected case, judge its output, write its trace as soon as it is done."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from pydantic import BaseModel, Field

from assay.checks import Check, CheckContext, CheckSpecError, build_check
from assay.checks.base import CHECK
from assay.errors import ConfigError
from assay.evaluation.executor import Executor, LocalExecutor
from assay.evaluation.scoring import combine, decided_without, not_run, runner_check
from assay.evaluation.traces import TracePolicy, close_traces, write_trace
from assay.model import Case, CaseResult, CheckResult, CheckSpec, Output, Split
from assay.registry import conform
from assay.static.report import StaticReport

if TYPE_CHECKING:
    from assay.config import AssayConfig
    from assay.llm.base import LLM
    from assay.runners.base import Runner
    from assay.sandbox import SandboxLimits


REMOTE_UNSANDBOXED = "worker_unsandboxed"  # Output.meta key: why a case ran unsandboxed on its worker


class EvalTotals(NamedTuple):
    """An evaluation's totals: the judged cases, how many passed, the unjudged cases left out, the judged ones'
    mean score, and over every case the tokens, the cost and the judged checks not needed."""

    total: int
    passed: int
    unjudged: int
    mean_score: float
    tokens: int
    cost_usd: float
    judged_not_run: int

    @property
    def failed(self) -> int:
        return self.total - self.passed

    @property
    def pass_rate(self) -> float:
        return self.passed / self.total if self.total else 0.0


class EvalResult(BaseModel):
    """The outcome of evaluating one artifact on a set of cases. ``sandbox`` is how the runner ran the cases:
    ``strict`` (in the jail), ``none`` (plain processes; ``unsandboxed`` says why) or None (no process).

    Counts and rates are over the *judged* cases: an unjudged case (one without checks) ran, but neither
    passed nor failed, so ``total``, ``passed``, ``pass_rate`` and ``mean_score`` leave it out and
    ``unjudged`` counts it."""

    cases: list[CaseResult] = Field(default_factory=list)
    static: StaticReport | None = None
    duration_s: float = 0.0
    trace_dir: str | None = None
    sandbox: str | None = None
    unsandboxed: str | None = None

    @property
    def judged(self) -> list[CaseResult]:
        return [c for c in self.cases if not c.unjudged]

    def tally(self) -> EvalTotals:
        """Every total at once (read it once where several are wanted: a property is a pass of its own)."""
        total, passed, mean = self._judged()
        unjudged = len(self.cases) - total
        return EvalTotals(total, passed, unjudged, mean, self.tokens, self.cost_usd, self.judged_not_run)

    def _judged(self) -> tuple[int, int, float]:
        """The judged cases' number, how many passed and their mean score, in one pass."""
        scores: list[float] = []
        passed = 0
        for case in self.cases:
            if not case.unjudged:
                scores.append(case.score)
                passed += case.passed
        total = len(scores)
        return total, passed, sum(scores) / total if total else 0.0

    @property
    def unjudged(self) -> int:
        return len(self.cases) - self._judged()[0]

    @property
    def total(self) -> int:
        return self._judged()[0]

    @property
    def passed(self) -> int:
        return self._judged()[1]

    @property
    def failed(self) -> int:
        total, passed, _ = self._judged()
        return total - passed

    @property
    def pass_rate(self) -> float:
        total, passed, _ = self._judged()
        return passed / total if total else 0.0

    @property
    def mean_score(self) -> float:
        return self._judged()[2]

    @property
    def tokens(self) -> int:
        return sum(c.tokens for c in self.cases)

    @property
    def cost_usd(self) -> float:
        return sum(c.cost_usd for c in self.cases)

    @property
    def judged_not_run(self) -> int:
        """Judged checks not run because their cases were decided without them (judge calls saved)."""
        return sum(c.skipped for case in self.cases for c in case.checks)

    @property
    def blocked(self) -> bool:
        """True when the L1 static tier found a critical problem and no case was run."""
        return self.static is not None and not self.static.passed


@dataclass(frozen=True)
class EvaluatorRecipe:
    """How an evaluator was built from assay.yaml (the arguments of ``build_evaluator``), so an executor that
    runs cases on other machines can build the same evaluator there."""

    config: AssayConfig
    cases: list[tuple[Case, Split]]
    all_cases: list[tuple[Case, Split]] | None
    use_cache: bool
    concurrency: int | None
    judge_votes: int | None


class Evaluator:
    """Runs cases through a runner and their checks, with bounded concurrency, never aborting on a case."""

    def __init__(
        self,
        runner: Runner,
        *,
        judge: LLM | None = None,
        judge_votes: int = 3,
        executor: Executor | None = None,
        concurrency: int | None = None,
        limits: SandboxLimits | None = None,
        project_dir: Path | None = None,
        recipe: EvaluatorRecipe | None = None,
        traces: TracePolicy | None = None,
        checks: Mapping[str, object] | None = None,
    ) -> None:
        self.runner = runner
        # Check types given through the Python API: an object used for every spec of its type, or a factory
        # (a class) called with each spec.
        self.given_checks = dict(checks or {})
        self.judge = judge
        self.judge_votes = judge_votes
        self.executor = executor or LocalExecutor()
        self.concurrency = concurrency or runner.default_concurrency()
        self.limits = limits
        self.project_dir = project_dir
        self.recipe = recipe
        self.traces = traces or TracePolicy()
        self._bound: dict[int, tuple[Case, list[Check]]] = {}

    async def aclose(self) -> None:
        """Release the runner's and the judge's clients."""
        await self.runner.aclose()
        if self.judge is not None:
            await self.judge.aclose()
        self.executor.close()

    def checks_for(self, case: Case) -> list[Check]:
        """The case's checks, bound once per case object (regexes compiled, schemas read, modules imported).

        Raises ConfigError naming the case file and check when a check cannot be prepared."""
        entry = self._bound.get(id(case))
        if entry is None or entry[0] is not case:
            checks = []
            for index, spec in enumerate(case.checks):
                check = self._check(spec)
                try:
                    check.prepare(self.project_dir)
                except CheckSpecError as exc:
                    raise ConfigError(
                        str(exc), file=case.source, field=f"{case.id}.checks[{index}]"
                    ) from None
                checks.append(check)
            entry = (case, checks)
            self._bound[id(case)] = entry
        return entry[1]

    def _check(self, spec: CheckSpec) -> Check:
        """The check of ``spec``: as registered, or as the Python API gave its type (see ``__init__``)."""
        given = self.given_checks.get(spec.type)
        if given is None:
            return build_check(spec)
        made = conform(CHECK, given(spec) if isinstance(given, type) else given)
        if not hasattr(made, "spec"):
            made.spec = spec  # an object of another class: the evaluator reads the weight from the spec
        return made

    def bind(self, cases: Sequence[tuple[Case, Split]]) -> None:
        """Prepare every case's checks up front, so configuration errors surface before any case runs."""
        for case, _ in cases:
            self.checks_for(case)

    async def run_case(
        self, case: Case, split: Split, workdir: Path, trace_dir: Path | None = None
    ) -> CaseResult:
        """Run one case and judge it. Runner failures become a failed case with evidence."""
        start = time.perf_counter()
        try:
            output = await self.runner.run(case, workdir)
        except Exception as exc:  # a runner bug must not kill the evaluation
            output = Output(error=f"runner error: {type(exc).__name__}: {exc}")
        ran_in = output.workdir  # a runner that ran elsewhere says where; most say the workdir (no new Path)
        context = CheckContext(
            case=case,
            workdir=workdir if not ran_in or ran_in == str(workdir) else Path(ran_in),
            judge=self.judge,
            judge_votes=self.judge_votes,
            limits=self.limits,
            project_dir=self.project_dir,
        )
        checks = self.checks_for(case)
        unjudged = not checks
        failure = runner_check(output)
        # Cheap checks first; a judged check runs only when its verdict can still change the case's.
        ran: dict[int, CheckResult] = {}
        for index, check in enumerate(checks):
            if not check.judged:
                ran[index] = await check.run(output, context)
        judged = [i for i, check in enumerate(checks) if check.judged]
        if judged and decided_without(
            case, [*ran.values()], [checks[i].spec.weight for i in judged], failure is not None
        ):
            for index in judged:
                ran[index] = not_run(checks[index])
        else:
            for index in judged:
                ran[index] = await checks[index].run(output, context)
        results = [ran[i] for i in range(len(checks))]
        if failure is not None:
            results.append(failure)
        passed, score = (
            (False, 0.0) if unjudged else combine(case, results, runner_failed=failure is not None)
        )
        result = CaseResult(
            id=case.id,
            split=split,
            passed=passed,
            score=score,
            unjudged=unjudged,
            output=output,
            checks=results,
            duration_s=time.perf_counter() - start,
        )
        if trace_dir is not None and self.traces.keeps(result):
            # Written inline: a writer thread fought the event loop for the GIL and cost more than it saved.
            result.trace_path = write_trace(trace_dir, case, result, compress=self.traces.compress)
        return result

    async def run(
        self,
        cases: Sequence[tuple[Case, Split]],
        workdir: Path,
        *,
        trace_dir: Path | None = None,
        on_result: Callable[[CaseResult], None] | None = None,
    ) -> EvalResult:
        """Evaluate every (case, split) pair in ``workdir``; results come back in input order."""
        start = time.perf_counter()

        try:
            results = await self.executor.evaluate(
                self, cases, workdir, trace_dir=trace_dir, on_result=on_result
            )
        finally:
            await self.runner.release(workdir)
            if trace_dir is not None:
                close_traces(trace_dir)
        sandbox = getattr(self.runner, "sandbox", None)
        unsandboxed = getattr(getattr(self.runner, "context", None), "unsandboxed", None)
        # Cases run on other machines report how they ran there: one unsandboxed worker makes the run so.
        remote = next(
            (c.output.meta[REMOTE_UNSANDBOXED] for c in results if c.output.meta.get(REMOTE_UNSANDBOXED)),
            None,
        )
        if remote is not None:
            sandbox, unsandboxed = "none", remote
        return EvalResult(
            cases=results,
            duration_s=time.perf_counter() - start,
            trace_dir=str(trace_dir) if trace_dir else None,
            sandbox=sandbox,
            unsandboxed=unsandboxed,
        )
