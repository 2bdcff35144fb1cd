"""``assay report``: one self-contained HTML page of a run (score trajectory, lineage, gate verdicts, cases)."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from assay.cli.console import make_console
from assay.words import plural

out = make_console()

CONFIG = typer.Option(Path("assay.yaml"), "--config", "-c", help="Path to assay.yaml.", envvar="ASSAY_CONFIG")


def report_command(
    run_argument: str | None = typer.Argument(
        None, metavar="RUN", help="The run id, or latest (the same as --run RUN).", show_default=False
    ),
    run_option: str | None = typer.Option(
        None,
        "--run",
        "-r",
        help="The run id, or latest (default: latest), as `assay log` and `adopt` take it.",
    ),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Where to write the page (default: the run folder's report.html)."
    ),
    share: bool = typer.Option(
        False, "--share", help="Leave out check values, holdout and regression cases, and secrets in outputs."
    ),
    config: Path = CONFIG,
) -> None:
    """Write a self-contained HTML report of a run: what changed, why it was kept, on which cases, and
    whether it was noise. It holds check values and holdout cases unless --share."""
    from assay.config import load_config
    from assay.evaluation.key_redactor import key_redactor
    from assay.evaluation.session import select_cases
    from assay.report import default_run_output, render_run, run_report, write_report
    from assay.report.share import Sharer, share_run

    if run_argument is not None and run_option is not None and run_argument != run_option:
        raise typer.BadParameter(
            f"names {run_option}, and RUN names {run_argument}: give one", param_hint="--run"
        )
    run = run_argument or run_option or "latest"
    start = time.perf_counter()
    cfg = load_config(config)
    report = run_report(cfg, run)
    if share:
        everything = select_cases(cfg, "all", unjudged=True).cases
        dev = [c for c, split in everything if split.value == "dev"]
        hidden = [c for c, split in everything if split.value != "dev"]
        report = share_run(report, Sharer(key_redactor(cfg, dev, hidden)))
    html = render_run(report, share=share)
    target = write_report(cfg, output or default_run_output(cfg, report.run.run_id), html)
    out.print(
        f"report of run {report.run.run_id} ({plural(len(report.nodes), 'candidate')}): {target}"
        f" ({len(html.encode()) / 1024:.0f} KiB, {time.perf_counter() - start:.1f}s)",
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
