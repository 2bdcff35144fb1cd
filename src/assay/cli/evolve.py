"""``assay evolve`` and ``assay resume``: run the loop, print one line per generation and a summary."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from assay.cli.console import LazyConsole
from assay.cli.executor_option import EXECUTOR, checked_executor
from assay.cli.exits import INTERRUPTED, run_status
from assay.presets import budgets
from assay.words import cut_at_word, plural

if TYPE_CHECKING:
    from assay.config import AssayConfig, ProposerConfig
    from assay.loop.engine import Evolution, RunOutcome

out = LazyConsole()
err = LazyConsole(stderr=True)

CONFIG = typer.Option(Path("assay.yaml"), "--config", "-c", help="Path to assay.yaml.", envvar="ASSAY_CONFIG")
# The names evolve.proposer.type takes (assay.config.PROPOSER_TYPES, which a test holds this to): written out so
# that `assay --help` does not import pydantic.
PROPOSER_NAMES = ("mutate", "tune", "llm", "agent")
RESULT_WORDS = {
    "gain": "a gain",
    "simplification": "a simplification at equal score",
    "cheaper": "cheaper at equal score",
    "no gain": "no gain",
}


def _print_outcome(outcome: RunOutcome) -> None:
    from rich.text import Text

    base, best = outcome.baseline, outcome.best
    out.print(Text("stopped:", style="bold"), outcome.stop_reason, highlight=False, soft_wrap=True)

    def show(label: str, before: float | None, after: float | None) -> None:
        if before is None or after is None:
            return
        out.print(f"  {label:14s} {before:.4f} -> {after:.4f} ({after - before:+.4f})", highlight=False)

    show("dev score", base.dev_score, best.dev_score)
    show("dev pass rate", base.dev_pass_rate, best.dev_pass_rate)
    show("holdout score", base.holdout_score, best.holdout_score)
    out.print(
        f"  {plural(outcome.generations, 'generation')}, {plural(outcome.case_runs, 'case run')},"
        f" {outcome.seconds:.1f}s;"
        f" best {best.candidate_id} ({(best.commit or '')[:12]})",
        highlight=False,
    )
    if outcome.suspects:
        shown = ", ".join(outcome.suspects[:5]) + (
            f" and {len(outcome.suspects) - 5} more" if len(outcome.suspects) > 5 else ""
        )
        out.print(
            f"  unfixable cases (the best failed them 5+ generations in a row; check them): {shown}",
            highlight=False,
            soft_wrap=True,
        )
    if outcome.unsandboxed:
        out.print(
            Text("  ran unsandboxed:", style="yellow bold"), ", ".join(outcome.unsandboxed), highlight=False
        )
    for line in outcome_lines(outcome):
        out.print(f"  {line}", highlight=False, soft_wrap=True)


def outcome_lines(outcome: RunOutcome) -> list[str]:
    """The end of the summary: the kind of result, the caveat on the best, and a last line that states the
    result again (``no gain`` is a result) with whether and how to adopt it."""
    result, run = outcome.result, outcome.run_id
    lines = [f"result: {result.line()}"]
    if outcome.caveat:
        lines.append(f"caveat: {outcome.caveat}")
    found = RESULT_WORDS[result.kind] + (" so far" if outcome.status == "stopped" else "")
    if outcome.best.candidate_id == outcome.baseline.candidate_id:
        advice = f"{found}, nothing to adopt (the best is the baseline)"
    elif not result.adoptable:
        advice = f"{found}, nothing to adopt (the best is no better, smaller or cheaper than the baseline)"
    elif outcome.caveat:
        advice = (
            f"{found} with a caveat: `assay adopt best` refuses because of it;"
            " `assay adopt best --force` merges it anyway"
        )
    else:
        advice = f"{found}: `assay adopt best` merges the best candidate into your branch"
    if outcome.status == "stopped":
        advice += "; the run stopped before its end, `assay resume` continues it"
    elif outcome.dead_end:
        advice += "; the run could not go on (a dead end: fix what the stop reason names)"
    lines.append(f"run {run}: {advice}")
    return lines


def evolve_command(
    config: Path = CONFIG,
    preset: str | None = typer.Option(
        None,
        "--preset",
        help=f"quick, standard or deep (overrides assay.yaml; `assay resume` keeps it). {budgets()}"
        " (the offline default proposer runs without a plateau).",
    ),
    max_generations: int | None = typer.Option(
        None, "--max-generations", "-n", min=1, help="Stop after N generations (`assay resume` keeps it)."
    ),
    no_cache: bool = typer.Option(
        False, "--no-cache", help="Bypass the LLM response cache (`assay resume` keeps it)."
    ),
    executor: str | None = EXECUTOR,
    proposer: str | None = typer.Option(
        None,
        "--proposer",
        metavar="NAME",
        help=f"The proposer, any that evolve.proposer.type takes: {', '.join(PROPOSER_NAMES)} (overrides"
        " assay.yaml, whose evolve.proposer options it uses: llm needs llm.model, agent a command;"
        " `assay resume` keeps it).",
    ),
    list_parameters: bool = typer.Option(
        False,
        "--list-parameters",
        help="Show the numbers numeric tuning would tune, with their ranges, and exit.",
    ),
) -> None:
    """Improve the artifact: propose, commit, verify in tiers, gate, keep or roll back, until a stop rule.
    The run records the options given here (-n, --preset, --executor, --no-cache, --proposer); `assay resume`
    keeps them. The first line names the proposer and where the choice came from."""
    from assay.config import load_config

    if preset is not None and preset not in ("quick", "standard", "deep"):
        raise typer.BadParameter("expected quick, standard or deep", param_hint="--preset")
    if proposer is not None and proposer not in PROPOSER_NAMES:
        raise typer.BadParameter(f"expected one of {', '.join(PROPOSER_NAMES)}", param_hint="--proposer")
    where = checked_executor(executor)
    cfg = load_config(config)
    if list_parameters:
        _list_parameters(cfg)
        return
    from assay.loop.engine import Evolution  # heavy: loaded only when a run starts

    evolution = Evolution(
        cfg,
        preset=preset,
        max_generations=max_generations,
        use_cache=not no_cache,
        executor=where,
        report=lambda line: out.print(line, highlight=False, soft_wrap=True),
        proposer=proposer,
    )
    evolution.opening = header(evolution, "evolve")
    _run(lambda: evolution.start(), evolution)


def header(evolution: Evolution, what: str, skip: str | None = None) -> list[str]:
    """The first line of ``evolve`` and ``resume``: which proposer runs and where the choice came from, and the
    limits; then a line when another run of the project is live (``skip``: the run being resumed)."""
    cfg, told = evolution.config, evolution.overrides
    spec = cfg.evolve.proposer
    if told.proposer is not None:
        source = "from --proposer" if what == "evolve" else "from the --proposer the run was started with"
    elif "type" in spec.model_fields_set:
        source = f"from {cfg.path.name if cfg.path else 'assay.yaml'}"
    else:
        source = "the default: assay.yaml sets no evolve.proposer"
    settings = evolution.settings
    preset = told.preset or cfg.evolve.preset
    limits = (
        f"{plural(evolution.max_generations, 'generation')} at most, {settings.wall_clock_s:g}s wall clock"
        f" (preset {preset})"
    )
    lines = [f"{what}: proposer {describe_proposer(spec)} ({source}); {limits}"]
    lines += [f"note: {line}" for line in _live_runs(cfg, skip)]
    return lines


def describe_proposer(spec: ProposerConfig) -> str:
    """``mutate (offline: structural edits and numeric tuning)``, ``llm (openai:gpt-4o-mini)``, ..."""
    if spec.type == "mutate":
        return (
            "mutate (offline: structural edits and numeric tuning)"
            if spec.tuning
            else "mutate (offline edits)"
        )
    if spec.type == "tune":
        return "tune (offline numeric tuning)"
    if spec.type == "llm" and spec.llm is not None:
        return f"llm ({spec.llm.model})"
    if spec.type == "agent" and spec.command:
        return f"agent ({cut_at_word(spec.command, 48)})"
    return spec.type


def _live_runs(cfg: AssayConfig, skip: str | None) -> list[str]:
    """One line per other run of the project that a live process is running now."""
    from assay.history.owner import is_live, owner_text
    from assay.history.store import RunStore

    path = cfg.data_path / "assay.db"
    if not path.exists():
        return []
    store = RunStore(f"sqlite:///{path}")
    try:
        runs = [r for r in store.list_runs() if r.status == "running" and r.run_id != skip]
    finally:
        store.close()
    lines = []
    for run in runs:
        run_dir = cfg.data_path / "runs" / run.run_id
        if is_live(run_dir):
            who = owner_text(run_dir)
            lines.append(
                f"run {run.run_id} of this project is running in another process{f' ({who})' if who else ''}:"
                " both share the machine, and their timings and cost checks with it"
            )
    return lines


def _list_parameters(cfg: AssayConfig) -> None:
    from assay.history.scope import artifact_files
    from assay.proposers.tune import search_space

    root = cfg.artifact_dir
    paths = artifact_files(root, cfg.artifact.paths, forbid=cfg.artifact.forbid)
    files = {p: (root / p).read_text(encoding="utf-8", errors="replace") for p in paths}
    space = search_space(files, cfg.evolve.parameters)
    if not (space.parameters or space.pinned or space.excluded):
        out.print("no tunable numbers in the artifact's files", highlight=False)
    for parameter in space.parameters:
        out.print(f"tuned    {parameter.describe()}", highlight=False)
    for site, value in space.pinned:
        out.print(f"pinned   {site.name} = {value!r} (was {site.value!r})", highlight=False)
    for site in space.excluded:
        out.print(f"excluded {site.name} = {site.value!r}", highlight=False)


def resume_command(
    run_id: str | None = typer.Argument(None, help="The run to resume (default: the latest unfinished one)."),
    config: Path = CONFIG,
    max_generations: int | None = typer.Option(
        None,
        "--max-generations",
        "-n",
        min=1,
        help="Stop after N generations in all, in place of the -n the run was started with (or its config's).",
    ),
    executor: str | None = EXECUTOR,
) -> None:
    """Continue a stopped or killed run where its logs end, with the options `assay evolve` was given (-n,
    --preset, --executor, --no-cache). -n or --executor given here replace the run's, and a line says so."""
    from assay.config import load_config

    where = checked_executor(executor)
    cfg = load_config(config)
    from assay.loop.engine import Evolution  # heavy: loaded only when a run starts

    evolution = Evolution(
        cfg,
        max_generations=max_generations,
        executor=where,
        report=lambda line: out.print(line, highlight=False, soft_wrap=True),
    )
    run = evolution.reopen(run_id)  # before the live view: it shows the limits the run takes up
    evolution.opening = header(evolution, f"resume run {run}", skip=run)
    _run(lambda: evolution.resume(run), evolution)


def _run(start: Callable[[], Coroutine[Any, Any, RunOutcome]], evolution: Evolution) -> None:
    """Run the loop; in a terminal, a live view of the run stays under the lines of the generations."""
    from assay.cli.collector import run_command

    try:
        if out.is_terminal:
            from rich.live import Live

            from assay.cli.live import LiveView, RunLimits

            settings = evolution.settings
            budget = RunLimits.of(evolution.config.evolve, evolution.max_generations, settings.wall_clock_s)
            with Live(LiveView(evolution, budget), console=out.real, refresh_per_second=2, transient=True):
                outcome = run_command(start())
        else:  # a pipe or a log file: a status line every few seconds stands in for the live view
            from assay.cli.ticker import Ticker, every_s

            started = time.monotonic()
            line = lambda: _status_line(evolution, time.monotonic() - started)  # noqa: E731
            write = lambda text: out.print(text, highlight=False, markup=False, soft_wrap=True)  # noqa: E731
            with Ticker(line, write, every=every_s(10.0)):
                outcome = run_command(start())
    except KeyboardInterrupt:
        err.print("interrupted: the current generation was abandoned; `assay resume` continues the run")
        sys.exit(INTERRUPTED)
    _print_outcome(outcome)
    raise typer.Exit(run_status(outcome))


def _status_line(evolution: Evolution, session_s: float) -> str:
    """``… generation 3 / 100, 12/34 cases, best so far cand-0002 dev 0.8235, time 130s, …``: the live view's
    rows on one line, with the cases done of the evaluation in progress."""
    from assay.cli.live import RunLimits, status_lines

    settings = evolution.settings
    budget = RunLimits.of(evolution.config.evolve, evolution.max_generations, settings.wall_clock_s)
    view = evolution.view
    rows = status_lines(view, budget, max(view.elapsed if view is not None else 0.0, session_s))
    cases = evolution.cases_now
    if cases is not None and cases[1]:
        rows.insert(1, ("cases", f"{cases[0]}/{cases[1]}"))
    return "… " + ", ".join(f"{name} {value}" for name, value in rows)


def register(app: typer.Typer) -> None:
    app.command("evolve")(evolve_command)
    app.command("resume")(resume_command)
