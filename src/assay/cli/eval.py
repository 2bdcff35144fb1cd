"""``assay eval``: measure an artifact on its cases and print a per-case verdict with evidence."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from assay.cli.console import LazyConsole
from assay.cli.executor_option import EXECUTOR, apply_executor
from assay.cli.exits import COULD_NOT_RUN, FAILING, OK
from assay.errors import AssayError
from assay.limits import MAX_CONCURRENCY

if TYPE_CHECKING:
    from rich.progress import Progress

    from assay.config import AssayConfig
    from assay.evaluation.evaluator import EvalResult
    from assay.evaluation.session import Selection
    from assay.model import CaseResult


out = LazyConsole()
err = LazyConsole(stderr=True)

SPLITS = ("dev", "holdout", "regression", "all")
COLUMNS = ("case", "split", "result", "score", "time", "evidence")
JUSTIFY = ("left", "left", "left", "right", "right", "left")
VERDICT_STYLE = {"PASS": "green", "FAIL": "red", "UNJUDGED": "yellow"}
SHOWN_ROWS = 50  # more cases than this: the table shows the cases that did not pass, unless --all
RICH_ROWS = 200  # more rows than this are printed as plain aligned text: a rich table costs ~1 ms a row
ANSI = {"green": "\x1b[32m", "red": "\x1b[31m", "yellow": "\x1b[33m"}


def eval_command(
    config_file: Path | None = typer.Argument(
        None,
        metavar="CONFIG",
        help="assay.yaml, or a promptfoo config to run as it is (the same as -c CONFIG).",
        show_default=False,
    ),
    config_option: Path | None = typer.Option(
        None,
        "--config",
        "-c",
        help="Path to assay.yaml, or a promptfoo config to run as it is (default: assay.yaml).",
        envvar="ASSAY_CONFIG",
    ),
    split: str = typer.Option("all", "--split", "-s", help="Which cases: dev, holdout, regression or all."),
    workdir: Path | None = typer.Option(
        None,
        "--workdir",
        "-w",
        help="Run in this directory as it is (e.g. a worktree), instead of a copy of the artifact's work tree.",
    ),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        "-j",
        min=1,
        max=MAX_CONCURRENCY,
        help="Cases in flight at once (default: by runner).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a machine-readable result on stdout."),
    grading_json: Path | None = typer.Option(
        None, "--grading-json", help="Write skill-creator grading.json files under this directory."
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Bypass the LLM response cache."),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="No progress bar (and, without a terminal, no progress lines)."
    ),
    html: Path | None = typer.Option(
        None, "--html", help="Also write a self-contained HTML report (input, output, checks per case)."
    ),
    compare: str | None = typer.Option(
        None,
        "--compare",
        help="With --html: an eval folder or id, or a run id / latest (its best), side by side.",
    ),
    share: bool = typer.Option(
        False, "--share", help="With --html: leave out check values, holdout/regression cases and secrets."
    ),
    show_all: bool = typer.Option(
        False,
        "--all",
        help=f"Every case in the table (by default, past {SHOWN_ROWS} cases, only those not passing).",
    ),
    executor: str | None = EXECUTOR,
) -> None:
    """Evaluate the artifact on its cases. Exit 0 if every selected case passes, 1 if some fail, 2 on a
    configuration error, 3 when every case failed before the artifact ran (the runner is broken)."""
    from assay.cli.collector import run_command
    from assay.cli.ticker import CaseCounter, Ticker
    from assay.evaluation.deadend import dead_end
    from assay.evaluation.session import evaluate_project, select_cases, summary_document, write_grading
    from assay.evaluation.workcopy import project_copy, repository_of
    from assay.history.scope import artifact_files
    from assay.starters.promptfoo_eval import load_eval_config

    if split not in SPLITS:
        raise typer.BadParameter(f"expected one of {', '.join(SPLITS)}", param_hint="--split")
    _check_html_options(html, compare, share)
    loaded = load_eval_config(one_file(config_file, config_option, "CONFIG", "--config"))
    cfg = loaded.config
    for line in loaded.lines:
        err.print(line, highlight=False, markup=False, soft_wrap=True)
    apply_executor(cfg, executor)
    with loaded.terms():
        selection = select_cases(cfg, split, unjudged=True)
    if selection.warnings:
        from rich.text import Text

        for warning in selection.warnings:
            err.print(Text("warning:", style="yellow"), warning, highlight=False)
    if not selection.cases:
        raise AssayError(f"no cases in split {split!r} (--split all runs every case)")

    show_progress = not quiet and err.is_terminal
    progress = _progress_bar() if show_progress else None
    counter = CaseCounter("eval", len(selection.cases))
    # Without a terminal (a pipe, a log file, CI) a line every few seconds stands in for the bar.
    ticking = (
        Ticker(counter.line, _to_stderr) if not quiet and not err.is_terminal else contextlib.nullcontext()
    )
    with progress or contextlib.nullcontext(), ticking:
        task = progress.add_task("eval", total=len(selection.cases), status="") if progress else None

        def on_result(result: CaseResult) -> None:
            counter.add(not result.passed and not result.unjudged)
            if progress is not None and task is not None:
                progress.update(task, advance=1, status=f"{counter.failed} failed" if counter.failed else "")

        # A Ray driver prints cluster events (a node lost) on stdout: keep them off the --json document. The
        # cases run on a copy of the work tree as it is (docs/evolve.md, "Your tree"), unless --workdir says where.
        git = repository_of(cfg) if workdir is None else None
        with contextlib.redirect_stdout(sys.stderr), loaded.terms(), project_copy(cfg, git) as copy:
            result = run_command(
                evaluate_project(
                    cfg,
                    selection,
                    workdir=workdir or copy,
                    concurrency=concurrency,
                    use_cache=not no_cache,
                    on_result=on_result,
                )
            )

    if grading_json is not None:
        write_grading(grading_json, selection.cases, result)
    if html is not None:
        _write_html(cfg, html, selection, result, compare, share)
    if as_json:
        print(json.dumps(summary_document(result), indent=2, ensure_ascii=False))
    else:
        render(result, show_all=show_all)
    stuck = dead_end(result, artifact_files(workdir or cfg.artifact_dir, cfg.artifact.paths))
    if stuck is not None:
        head, *rest = stuck.lines()
        err.print(head, style="red", highlight=False, markup=False)
        for line in rest:
            err.print(line, highlight=False, markup=False)
        if workdir is None and git is not None:
            err.print(
                "  (the cases ran on a copy of the work tree: ignored files are not in it)", markup=False
            )
        raise typer.Exit(COULD_NOT_RUN)
    raise typer.Exit(OK if result.total and result.failed == 0 and not result.blocked else FAILING)


def _progress_bar() -> Progress:
    """The progress bar on a terminal (rich's progress is imported only then)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("[bold]eval"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=err.real,
        transient=True,
    )


def one_file(given: Path | None, option: Path | None, argument: str, flag: str) -> Path:
    """The config named as an argument or with ``flag`` (either spelling; both only when they agree)."""
    if given is not None and option is not None and given != option:
        raise typer.BadParameter(f"names {option}, and {argument} names {given}: give one", param_hint=flag)
    return given or option or Path("assay.yaml")


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _check_html_options(html: Path | None, compare: str | None, share: bool) -> None:
    if html is None and (compare is not None or share):
        raise typer.BadParameter("needs --html", param_hint="--compare" if compare else "--share")


def _write_html(
    cfg: AssayConfig,
    path: Path,
    selection: Selection,
    result: EvalResult,
    compare: str | None,
    share: bool,
) -> None:
    from assay.evaluation.key_redactor import key_redactor
    from assay.report import build_eval_report, compare_source, render_eval, write_report
    from assay.report.share import Sharer, share_eval

    label, other = compare_source(cfg, compare) if compare is not None else ("", None)
    cases = [case for case, _ in selection.everything or selection.cases]
    report = build_eval_report(
        f"assay eval of {cfg.artifact_dir.name}", result, cases, other=other, other_label=label
    )
    if share:
        everything = selection.everything or selection.cases
        dev = [c for c, split in everything if split.value == "dev"]
        hidden = [c for c, split in everything if split.value != "dev"]
        report = share_eval(report, Sharer(key_redactor(cfg, dev, hidden)))
    target = write_report(cfg, path, render_eval(report, share=share))
    err.print(f"report: {target}", highlight=False, soft_wrap=True)


def _row(case: CaseResult) -> tuple[str, ...]:
    failing = [c for c in case.checks if not c.passed]
    evidence = "; ".join(f"{c.type}: {c.evidence}" for c in failing)[:160]
    if case.unjudged:
        verdict, score = "UNJUDGED", "-"
        evidence = evidence or "no checks: left out of pass rate and score"
    else:
        verdict, score = ("PASS" if case.passed else "FAIL"), f"{case.score:.2f}"
    return case.id, case.split.value, verdict, score, f"{case.duration_s:.2f}s", evidence


def _print_plain(rows: list[tuple[str, ...]]) -> None:
    """``rows`` as aligned text in one write, the verdict coloured on a terminal."""
    widths = [min(60, max(len(column), *(len(row[i]) for row in rows))) for i, column in enumerate(COLUMNS)]
    colour = out.is_terminal

    def line(cells: tuple[str, ...], *, header: bool = False) -> str:
        parts = [
            cell.rjust(width) if justify == "right" else cell.ljust(width)
            for cell, width, justify in zip(cells, widths, JUSTIFY, strict=True)
        ]
        if colour and not header:
            parts[2] = f"{ANSI[VERDICT_STYLE[cells[2]]]}{parts[2]}\x1b[0m"
        return "  ".join(parts).rstrip()

    text = "\n".join([line(COLUMNS, header=True), *(line(row) for row in rows)])
    out.stream.write(text + "\n")
    out.stream.flush()


def render(result: EvalResult, *, show_all: bool = False) -> None:
    """The per-case table and a one-line summary. With more than ``SHOWN_ROWS`` cases the table holds the cases
    that did not pass unless ``show_all``; with more than ``RICH_ROWS`` rows it is plain aligned text."""
    if result.static:
        for f in result.static.findings:
            style = "red" if f.severity == "critical" else "yellow"
            _say((f.severity, style), f"{f.file}:{f.line or '-'} {f.rule}: {f.message}")
        if result.blocked:
            _say(("L1 static tier failed:", "red bold"), "critical findings above; no case was run.")
            return
    rows = [
        _row(case) for case in result.cases if show_all or len(result.cases) <= SHOWN_ROWS or not case.passed
    ]
    if len(rows) > RICH_ROWS:
        _print_plain(rows)
    elif rows:
        from rich.table import Table
        from rich.text import Text

        table = Table(show_lines=False, header_style="bold")
        for column, justify in zip(COLUMNS, JUSTIFY, strict=True):
            table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
        for row in rows:
            verdict = Text(row[2], style=VERDICT_STYLE[row[2]])
            table.add_row(row[0], row[1], verdict, *row[3:])
        out.print(table)
    hidden = len(result.cases) - len(rows)
    if hidden:
        _say(f"{hidden} passing cases not shown (--all shows every row)")
    tally = result.tally()
    extras = [f"{tally.unjudged} unjudged (no checks)"] if tally.unjudged else []
    if tally.tokens:
        extras.append(f"{tally.tokens} tokens")
    if tally.cost_usd:
        extras.append(f"${tally.cost_usd:.4f}")
    if tally.judged_not_run:
        extras.append(f"{tally.judged_not_run} judged checks not needed")
    line = (
        f"pass rate {tally.passed}/{tally.total} ({tally.pass_rate:.1%}) · mean score {tally.mean_score:.3f}"
        f" · {result.duration_s:.1f}s"
    )
    if extras:
        line += " · " + " · ".join(extras)
    _say((line, "bold"))
    if result.trace_dir:
        _say(f"traces: {result.trace_dir}")
    if result.sandbox == "none":
        _say(("ran unsandboxed:", "yellow bold"), result.unsandboxed or "")


def _say(*parts: str | tuple[str, str]) -> None:
    """One line on stdout, its parts joined by a space; a ``(text, style)`` part is styled on a terminal.
    Elsewhere (a pipe, a file, CI) the line is written as it is, without importing rich's console (15-25 ms
    at the end of every run)."""
    if not out.is_terminal:
        out.stream.write(" ".join(p if isinstance(p, str) else p[0] for p in parts) + "\n")
        return
    from rich.text import Text

    out.print(*(p if isinstance(p, str) else Text(p[0], style=p[1]) for p in parts), highlight=False)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
