"""Evaluate a project as configured in assay.yaml: load and split cases, L1 static tier, then the cases."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from assay.cases import assign_splits, select
from assay.cases.loader import CaseLoad, load_case_files
from assay.checks import needs_judge
from assay.config import AssayConfig, CommandRunnerConfig, PythonRunnerConfig
from assay.errors import ConfigError, UnreadableFile
from assay.evaluation.artifact_paths import refuse_bad_artifact_paths
from assay.evaluation.confine import runner_jail
from assay.evaluation.evaluator import EvalResult, Evaluator, EvaluatorRecipe
from assay.evaluation.executor import EXECUTOR, Executor, ExecutorProtocol
from assay.evaluation.key_reach import refuse_exposed_key
from assay.evaluation.traces import TracePolicy
from assay.fsutil import atomic_write_text, safe_name
from assay.model import Case, CaseResult, Split
from assay.registry import pick
from assay.runners import RunContext
from assay.runners.base import RUNNER, RunnerProtocol
from assay.sandbox import SandboxLimits
from assay.static.report import StaticReport


@dataclass
class Selection:
    """The cases chosen for an evaluation, with their splits, and any warnings raised while choosing;
    ``everything`` holds every loaded case (the candidates' jail hides the files all of their checks use)."""

    cases: list[tuple[Case, Split]]
    warnings: list[str] = field(default_factory=list)
    everything: list[tuple[Case, Split]] = field(default_factory=list)


def select_cases(config: AssayConfig, which: str = "all", *, unjudged: bool = False) -> Selection:
    """Load the configured case files, split them once (persisted), and pick ``which`` split. The cases of
    ``cases.dev_files`` are dev cases and never enter the split file, so adding them moves no other case.

    Unjudged cases (no checks) are split like the others but left out of the selection unless ``unjudged``
    (``assay eval`` shows them; the evolve loop never runs them: they could not tell a better candidate).
    When every selected case is unjudged that is a ConfigError: there is nothing to measure; so is an editable
    file that exposes the answer key (:mod:`assay.evaluation.answer_key`), and so are an editable path that
    matches no file and a case file both editable and forbidden (:mod:`assay.evaluation.artifact_paths`)."""
    refuse_bad_artifact_paths(config)
    loaded = _load(config, "files")
    extra = _load(config, "dev_files") if config.cases.dev_files else CaseLoad([], [], [])
    split_ids = {c.id for c in loaded.cases}
    for case in extra.cases:
        if case.id in split_ids:
            raise ConfigError(
                f"case id {case.id!r} of {case.source} is also in cases.files: a case is either split or dev "
                "only; rename one",
                file=config.path,
                field="cases.dev_files",
            )
    cases = [*loaded.cases, *extra.cases]
    refuse_exposed_key(config, cases)
    outcome = assign_splits(loaded.cases, config.cases.split, config.ensure_data_path() / "split.json")
    splits = {**outcome.splits, **{c.id: Split.DEV for c in extra.cases}}
    chosen = select(cases, splits, which)
    everything = [(c, splits[c.id]) for c in cases]
    if not unjudged:
        judged = [c for c in chosen if c.judged]
        if chosen and not judged:
            raise ConfigError(
                f"all {len(chosen)} selected cases have no checks (unjudged): nothing to measure; give "
                "them checks (see docs/cases.md)",
                file=config.path,
                field="cases.files",
            )
        chosen = judged
    return Selection(
        [(c, splits[c.id]) for c in chosen],
        [*loaded.warnings, *extra.warnings, *outcome.warnings],
        everything,
    )


def _load(config: AssayConfig, key: str) -> CaseLoad:
    """The cases of ``cases.<key>`` (``files`` or ``dev_files``); an unreadable file is named by its field."""
    files = [config.base_dir / f for f in getattr(config.cases, key)]
    try:
        return load_case_files(
            files, default_checks=list(config.checks), require_checks=config.cases.require_checks
        )
    except UnreadableFile as exc:
        names = [str(f) for f in files]
        if exc.file not in names:
            raise
        field = f"cases.{key}[{names.index(exc.file)}]"
        raise ConfigError(f"{exc.file}: {exc.message}", file=config.path, field=field) from None


def uses_judge(cases: list[tuple[Case, Split]], given: Mapping[str, object] | None = None) -> bool:
    """Whether any check of ``cases`` asks the judge model (a type ``given`` a check of the caller's own asks
    it only if that check is ``judged``)."""
    return any(needs_judge(spec, given) for case, _ in cases for spec in case.checks)


def new_eval_dir(config: AssayConfig) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return config.data_path / "evals" / f"{stamp}-{secrets.token_hex(2)}"


def script_limits(config: AssayConfig) -> SandboxLimits:
    """Limits for script checks: the runner's when it is a process runner, else defaults."""
    runner = config.runner
    if isinstance(runner, CommandRunnerConfig | PythonRunnerConfig):
        return SandboxLimits(
            timeout_s=runner.timeout,
            max_output_bytes=runner.max_output_bytes,
            memory_mb=runner.memory_mb,
            env_allow=tuple(runner.env_allow),
        )
    return SandboxLimits()


def static_report(config: AssayConfig, workdir: Path) -> StaticReport:
    """The L1 static tier on ``workdir`` (an empty, passing report when ``tiers.static`` is off)."""
    if not config.tiers.static:
        return StaticReport()
    from assay.static import scan_artifact
    from assay.static.cache import ScanCache

    return scan_artifact(
        workdir,
        config.artifact.paths,
        config.artifact.kind,
        security=config.tiers.security,
        cache=ScanCache(config.data_path / "cache" / "static"),
    )


def build_evaluator(
    config: AssayConfig,
    cases: list[tuple[Case, Split]],
    *,
    use_cache: bool = True,
    concurrency: int | None = None,
    judge_votes: int | None = None,
    all_cases: list[tuple[Case, Split]] | None = None,
    executor: ExecutorProtocol | str | None = None,
    bind: bool = True,
    runner: RunnerProtocol | str | None = None,
    checks: Mapping[str, object] | None = None,
) -> Evaluator:
    """The runner (with the candidates' jail, :mod:`assay.evaluation.confine`), the judge (when the cases need
    one) and the evaluator, with every check bound. ``all_cases`` (default ``cases``) are the cases whose check
    files the jail hides. ``runner``, ``executor`` and ``checks`` (check types) given as objects or registered
    names are used instead of the configured ones (:func:`assay.registry.pick`); an evaluator with a runner or
    checks given as objects runs its cases here (an executor elsewhere rebuilds its evaluator from assay.yaml).

    Raises ConfigError (naming assay.yaml) for a missing judge, a bad runner or a check that cannot be prepared.
    ``judge_votes`` (a preset's) applies unless ``judge.votes`` is set explicitly. ``executor`` defaults to the
    one ``executor`` in assay.yaml names; ``bind=False`` prepares each case's checks when it first runs (a Ray
    worker, whose driver already checked them all). Close with ``aclose``."""
    cache_dir = config.data_path / "cache" / "llm"
    cache = use_cache and config.cache
    jail, unsandboxed = runner_jail(config, [c for c, _ in (all_cases or cases)])
    context = RunContext(
        artifact_dir=config.artifact_dir,
        project_dir=config.base_dir,
        cache_dir=cache_dir,
        use_cache=cache,
        artifact_paths=list(config.artifact.paths),
        jail=jail,
        unsandboxed=unsandboxed,
    )
    # The runner first: its own problems (a missing prompt file, a bad command) come before the judge's.
    with in_config(config):
        made = pick(RUNNER, runner, config.runner.type, config.runner, context)
    judge = None
    if uses_judge(cases, checks):
        if config.judge is None:
            raise ConfigError(
                "cases use judged checks (llm_judge, fact_coverage) but no judge model is configured; "
                "add `judge: {model: provider:model}`",
                file=config.path,
                field="judge",
            )
        from assay.llm import make_llm

        with in_config(config):
            judge = make_llm(config.judge, cache_dir=cache_dir, use_cache=cache, section="judge")
    votes = 3 if judge_votes is None else judge_votes
    if config.judge is not None and (judge_votes is None or "votes" in config.judge.model_fields_set):
        votes = config.judge.votes
    own = (runner is not None and not isinstance(runner, str)) or bool(checks)
    evaluator = Evaluator(
        made,
        judge=judge,
        judge_votes=votes,
        executor=make_executor(config, executor),
        concurrency=concurrency or config.concurrency,
        limits=script_limits(config),
        project_dir=config.base_dir,
        recipe=None
        if own
        else EvaluatorRecipe(config, list(cases), all_cases, use_cache, concurrency, judge_votes),
        traces=TracePolicy.from_config(config.traces),
        checks=checks,
    )
    if bind:
        evaluator.bind(cases)
    return evaluator


def make_executor(config: AssayConfig, given: ExecutorProtocol | str | None = None) -> Executor:
    """The executor given (an object, used as it is, or a registered name), else the one ``executor.type``
    names (the Ray one is imported only when named)."""
    if given == "ray" or (given is None and config.executor.type == "ray"):
        import assay.evaluation.ray_executor  # noqa: F401 - registers the executor named ray
    return pick(EXECUTOR, given, config.executor.type, config)


async def evaluate_project(
    config: AssayConfig,
    selection: Selection,
    *,
    workdir: Path | None = None,
    concurrency: int | None = None,
    use_cache: bool = True,
    eval_dir: Path | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    runner: RunnerProtocol | str | None = None,
    executor: ExecutorProtocol | str | None = None,
    checks: Mapping[str, object] | None = None,
) -> EvalResult:
    """Run L1 (static) and then every selected case. Writes traces and ``summary.json`` under ``eval_dir``.
    ``runner``, ``executor`` and ``checks`` replace the configured ones (see :func:`build_evaluator`)."""
    workdir = (workdir or config.artifact_dir).resolve()
    eval_dir = eval_dir or new_eval_dir(config)
    static = static_report(config, workdir)
    if not static.passed:
        result = EvalResult(static=static, trace_dir=None)
        write_summary(eval_dir, result)
        return result
    evaluator = build_evaluator(
        config,
        selection.cases,
        use_cache=use_cache,
        concurrency=concurrency,
        all_cases=selection.everything or None,
        runner=runner,
        executor=executor,
        checks=checks,
    )
    try:
        result = await evaluator.run(
            selection.cases, workdir, trace_dir=eval_dir / "traces", on_result=on_result
        )
    finally:
        await evaluator.aclose()
    result.static = static
    write_summary(eval_dir, result)
    return result


@contextmanager
def in_config(config: AssayConfig) -> Iterator[None]:
    """Errors raised while building runners and judges are about assay.yaml: name it (and the field, which
    runner constructors put before the first colon of a ValueError, e.g. ``runner.command: ...``)."""
    try:
        yield
    except ConfigError as exc:
        if exc.file is None:
            raise ConfigError(exc.message, file=config.path, field=exc.field) from None
        raise
    except ValueError as exc:
        field, _, message = str(exc).partition(": ")
        if not message or " " in field:
            field, message = "runner", str(exc)
        raise ConfigError(message, file=config.path, field=field) from None


def summary_document(result: EvalResult) -> dict[str, object]:
    """The machine-readable result printed by ``assay eval --json`` and saved as summary.json."""
    tally = result.tally()
    return {
        "pass_rate": tally.pass_rate,
        "mean_score": tally.mean_score,
        "total": tally.total,
        "passed": tally.passed,
        "failed": tally.failed,
        "unjudged": tally.unjudged,
        "duration_s": round(result.duration_s, 3),
        "tokens": tally.tokens,
        "cost_usd": tally.cost_usd,
        "judged_checks_not_run": tally.judged_not_run,
        "trace_dir": result.trace_dir,
        "sandbox": result.sandbox,
        "unsandboxed": result.unsandboxed,
        "static": result.static.model_dump(mode="json") if result.static else None,
        "cases": [
            {
                "id": c.id,
                "split": c.split.value,
                "passed": None if c.unjudged else c.passed,
                "unjudged": c.unjudged,
                "score": None if c.unjudged else c.score,
                "error": c.output.error,
                "duration_s": round(c.duration_s, 4),
                "cpu_s": None if c.output.cpu_s is None else round(c.output.cpu_s, 4),
                "trace": c.trace_path,
                "checks": [
                    {"type": k.type, "passed": k.passed, "score": k.score, "evidence": k.evidence}
                    for k in c.checks
                ],
            }
            for c in result.cases
        ],
    }


def write_summary(eval_dir: Path, result: EvalResult) -> Path:
    path = eval_dir / "summary.json"
    atomic_write_text(path, json.dumps(summary_document(result), ensure_ascii=False))
    return path


class _Expectation(TypedDict):
    text: str
    passed: bool
    evidence: str


def write_grading(directory: Path, cases: list[tuple[Case, Split]], result: EvalResult) -> list[Path]:
    """Write skill-creator compatible ``eval-<id>/grading.json`` files (expectations + summary)."""
    written = []
    by_id = {case.id: case for case, _ in cases}
    for case_result in result.cases:
        case = by_id[case_result.id]
        expectations: list[_Expectation] = [
            {
                "text": check.text or _spec_text(check.type, spec),
                "passed": check.passed,
                "evidence": check.evidence,
            }
            for check, spec in zip(case_result.checks, [*case.checks, None], strict=False)
        ]
        passed = sum(e["passed"] for e in expectations)
        document = {
            "eval_id": case.id,
            "expectations": expectations,
            "summary": {
                "passed": passed,
                "failed": len(expectations) - passed,
                "total": len(expectations),
                "pass_rate": passed / len(expectations) if expectations else 0.0,
            },
        }
        path = directory / f"eval-{safe_name(case.id)}" / "grading.json"
        atomic_write_text(path, json.dumps(document, indent=2, ensure_ascii=False))
        written.append(path)
    return written


def _spec_text(label: str, spec: object) -> str:
    value = getattr(spec, "value", None)
    return f"[{label}] {value}" if value is not None else f"[{label}]"
