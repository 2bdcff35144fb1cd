"""The report pages, rendered with Jinja2 into one self-contained HTML file (inline CSS, SVG and script; a
Content-Security-Policy that forbids every network request)."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from assay.layer_names import layer_name
from assay.loop.announce import SUSPECT_AFTER
from assay.report import svg
from assay.report.evalview import EvalReport
from assay.report.run import RunReport
from assay.report.views import CaseView
from assay.version import __version__

_TEMPLATES = files("assay.report") / "templates"


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.4f}"


def _change(pair: tuple[float | None, float | None]) -> str:
    a, b = pair
    return "-" if a is None or b is None else f"{b - a:+.4f}"


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        return "[" + ", ".join(_number(v) for v in value) + "]"
    return str(value)


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("assay.report", "templates"),
        autoescape=select_autoescape(["html", "j2"], default=True),
        undefined=StrictUndefined,
        trim_blocks=False,
    )
    env.filters.update(score=_score, signed=_signed, change=_change, number=_number, layer=layer_name)
    return env


def _asset(name: str) -> Markup:
    """A stylesheet or script of this package, inlined as it is (trusted text, not data)."""
    return Markup((_TEMPLATES / name).read_text(encoding="utf-8"))


def render_run(report: RunReport, *, share: bool = False) -> str:
    """The run report as one HTML document."""
    base, best = report.baseline, report.best
    matrix: dict[str, dict[str, CaseView]] = {n.id: {c.id: c for c in n.cases} for n in report.kept}
    cases = sorted({cid for row in matrix.values() for cid in row})
    return (
        _environment()
        .get_template("run.html.j2")
        .render(
            r=report,
            cfg=report.config,
            share=share,
            css=_asset("report.css"),
            js=_asset("report.js"),
            version=__version__,
            config_summary=config_summary(report),
            score_rows=[
                ("dev score", base and base.dev_score, best and best.dev_score),
                ("dev pass rate", base and base.dev_pass_rate, best and best.dev_pass_rate),
                ("holdout score", base and base.holdout_score, best and best.holdout_score),
                (
                    "regression pass rate",
                    base and base.regression_pass_rate,
                    best and best.regression_pass_rate,
                ),
            ],
            colours=list(svg.COLOURS.items()),
            trajectory=svg.trajectory(report),
            lineage=svg.lineage(report),
            ratings=svg.ratings_chart(report) if report.ratings else "",
            spend_tokens=svg.spend_chart(report, "tokens"),
            spend_cost=svg.spend_chart(report, "cost"),
            spend_runs=svg.spend_chart(report, "case_runs"),
            matrix=matrix,
            matrix_cases=cases,
            suspect_after=SUSPECT_AFTER,
        )
    )


def config_summary(report: RunReport) -> list[tuple[str, str]]:
    """The few settings that explain a run: runner, proposer, gate, search, preset, tournament, noise."""
    cfg = report.config
    if cfg is None:
        return []
    evolve = cfg.evolve
    rows = [
        ("runner", cfg.runner.type),
        ("proposer", evolve.proposer.type),
        ("gate", evolve.gate + (f" (input: {evolve.gate_input})" if evolve.gate_input != "dev" else "")),
        ("search", evolve.search),
        ("preset", evolve.preset),
        ("sandbox", getattr(cfg.runner, "sandbox", None) or "default"),
    ]
    if evolve.tournament.enabled:
        rows.append(("tournament", f"{evolve.tournament.rating}, judge {evolve.tournament.judge}"))
    if evolve.screening != "none":
        rows.append(("screening", evolve.screening))
    if cfg.judge is not None:
        rows.append(("judge model", cfg.judge.model))
    return [(k, str(v)) for k, v in rows]


def render_eval(report: EvalReport, *, share: bool = False) -> str:
    """The evaluation report as one HTML document."""
    return (
        _environment()
        .get_template("eval.html.j2")
        .render(e=report, share=share, css=_asset("report.css"), js=_asset("report.js"), version=__version__)
    )
