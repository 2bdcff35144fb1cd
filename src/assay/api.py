"""The front door for Python: :func:`evaluate` measures an artifact on its cases, :func:`evolve` improves it.

Both take a configuration as a path to ``assay.yaml`` or an :class:`~assay.config.AssayConfig`; ``evaluate``
also takes a promptfoo config (``promptfooconfig.yaml``), run as it is. ``evolve``
takes every part of the loop — the proposer, the gate, the parent selector (``search``), the tournament's pairwise judge and
rating backend, the runner, the executor, check types and extra stop rules — as an object or a registered name,
used instead of the configured one (:mod:`assay.extensions`); ``evaluate`` the runner, the executor and check types.
The command line and ``assay serve`` are thin layers over the same code. See docs/api.md.

    import assay

    result = assay.evaluate("assay.yaml", split="dev")
    print(result.pass_rate)
    outcome = assay.evolve("assay.yaml", max_generations=10)
    print(outcome.best.dev_score, outcome.stop_reason)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from assay.aio import run_sync
from assay.config import AssayConfig, load_config
from assay.evaluation.evaluator import EvalResult
from assay.evaluation.session import evaluate_project, select_cases
from assay.evaluation.workcopy import project_copy, repository_of
from assay.loop.engine import Evolution, RunOutcome
from assay.protocols import (
    ExecutorProtocol,
    GateProtocol,
    PairwiseJudgeProtocol,
    ParentSelectorProtocol,
    ProposerProtocol,
    RatingBackendProtocol,
    RunnerProtocol,
    StopRuleProtocol,
)
from assay.starters.promptfoo_eval import EvalConfig, load_eval_config

ConfigLike = AssayConfig | str | Path


def _config(config: ConfigLike) -> AssayConfig:
    return config if isinstance(config, AssayConfig) else load_config(config)


async def evaluate_async(
    config: ConfigLike = "assay.yaml",
    *,
    split: str = "all",
    workdir: str | Path | None = None,
    concurrency: int | None = None,
    use_cache: bool = True,
    runner: RunnerProtocol | str | None = None,
    executor: ExecutorProtocol | str | None = None,
    checks: Mapping[str, object] | None = None,
) -> EvalResult:
    """Measure the artifact on the cases of ``split`` (dev, holdout, regression or all): the L1 static tier, then
    every case through the runner and its checks. In a git repository the cases run on a temporary copy of the
    work tree as it is, so nothing they write lands in it; ``workdir`` runs them in that directory instead (a
    copy of the artifact root, e.g. a worktree). Traces and ``summary.json`` are written under the project's
    data directory. A failing case is a result, never an exception; a configuration error raises
    :class:`~assay.errors.ConfigError`. Cases without checks run and come back ``unjudged``, left out of
    ``pass_rate`` and ``mean_score``. A promptfoo config runs as ``assay init`` would set it up, with nothing
    written beside it but the data directory. ``runner``, ``executor`` (an object or a registered name) and
    ``checks`` (check type -> an object, or a class built with each check's spec) replace the configured
    ones."""
    loaded = EvalConfig(config) if isinstance(config, AssayConfig) else load_eval_config(config)
    cfg = loaded.config
    with loaded.terms():
        selection = select_cases(cfg, split, unjudged=True)
        with project_copy(cfg, repository_of(cfg) if workdir is None else None) as copy:
            return await evaluate_project(
                cfg,
                selection,
                workdir=Path(workdir) if workdir is not None else copy,
                concurrency=concurrency,
                use_cache=use_cache,
                runner=runner,
                executor=executor,
                checks=checks,
            )


def evaluate(
    config: ConfigLike = "assay.yaml",
    *,
    split: str = "all",
    workdir: str | Path | None = None,
    concurrency: int | None = None,
    use_cache: bool = True,
    runner: RunnerProtocol | str | None = None,
    executor: ExecutorProtocol | str | None = None,
    checks: Mapping[str, object] | None = None,
) -> EvalResult:
    """:func:`evaluate_async`, run to completion (from code that is not already in an event loop)."""
    return run_sync(
        evaluate_async(
            config,
            split=split,
            workdir=workdir,
            concurrency=concurrency,
            use_cache=use_cache,
            runner=runner,
            executor=executor,
            checks=checks,
        )
    )


async def evolve_async(
    config: ConfigLike = "assay.yaml",
    *,
    proposer: ProposerProtocol | str | None = None,
    gate: GateProtocol | str | None = None,
    search: ParentSelectorProtocol | str | None = None,
    judge: PairwiseJudgeProtocol | str | None = None,
    stop_rules: Sequence[StopRuleProtocol | str] = (),
    runner: RunnerProtocol | str | None = None,
    executor: ExecutorProtocol | str | None = None,
    ratings: RatingBackendProtocol | str | None = None,
    checks: Mapping[str, object] | None = None,
    max_generations: int | None = None,
    preset: str | None = None,
    resume: bool | str = False,
    use_cache: bool = True,
    report: Callable[[str], None] | None = None,
) -> RunOutcome:
    """Run the evolve loop on the project of ``config`` (in a git repository whose tracked changes, and files
    the run needs, are committed: see ``assay init`` and docs/evolve.md, "Your tree") and return what the run
    found. ``resume`` continues the latest unfinished run (True) or the run with that id instead of starting a
    new one. ``report`` receives one line per generation.

    The parts given as objects need not subclass assay's base classes: each is checked against its Protocol
    (:mod:`assay.protocols`) and one that lacks a required method, or has one of the wrong kind, raises
    :class:`~assay.extensions.ExtensionError` (a ConfigError, one line) before anything runs."""
    evolution = Evolution(
        _config(config),
        preset=preset,
        max_generations=max_generations,
        use_cache=use_cache,
        report=report,
        proposer=proposer,
        gate=gate,
        search=search,
        judge=judge,
        stop_rules=stop_rules,
        runner=runner,
        executor=executor,  # type: ignore[arg-type]
        ratings=ratings,
        checks=checks,
    )
    if resume:
        return await evolution.resume(resume if isinstance(resume, str) else None)
    return await evolution.start()


def evolve(
    config: ConfigLike = "assay.yaml",
    *,
    proposer: ProposerProtocol | str | None = None,
    gate: GateProtocol | str | None = None,
    search: ParentSelectorProtocol | str | None = None,
    judge: PairwiseJudgeProtocol | str | None = None,
    stop_rules: Sequence[StopRuleProtocol | str] = (),
    runner: RunnerProtocol | str | None = None,
    executor: ExecutorProtocol | str | None = None,
    ratings: RatingBackendProtocol | str | None = None,
    checks: Mapping[str, object] | None = None,
    max_generations: int | None = None,
    preset: str | None = None,
    resume: bool | str = False,
    use_cache: bool = True,
    report: Callable[[str], None] | None = None,
) -> RunOutcome:
    """:func:`evolve_async`, run to completion (from code that is not already in an event loop)."""
    return run_sync(
        evolve_async(
            config,
            proposer=proposer,
            gate=gate,
            search=search,
            judge=judge,
            stop_rules=stop_rules,
            runner=runner,
            executor=executor,
            ratings=ratings,
            checks=checks,
            max_generations=max_generations,
            preset=preset,
            resume=resume,
            use_cache=use_cache,
            report=report,
        )
    )
