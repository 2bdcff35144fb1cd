"""Charts of a run as inline SVG, drawn in Python: the score trajectory, the lineage tree, ratings and spend.

Every mark that stands for a candidate carries ``data-node`` (its candidate id) and a ``<title>``, so the page's
script can select it and a browser shows what it is on hover. Text is escaped with markupsafe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from assay.layer_names import layer_name
from assay.report.run import CandidateNode, RunReport

COLOURS = {
    "baseline": "#4c6ef5",
    "keep": "#2b8a3e",
    "discard": "#adb5bd",
    "invalid": "#e03131",
    "retry": "#f08c00",
    "pending": "#7048e8",
}
WIDTH = 900
HEIGHT = 260
PAD_L, PAD_R, PAD_T, PAD_B = 48, 16, 16, 32


@dataclass(frozen=True)
class Scale:
    """A linear map from ``[lo, hi]`` onto pixels ``[a, b]``."""

    lo: float
    hi: float
    a: float
    b: float

    def __call__(self, value: float) -> float:
        span = self.hi - self.lo or 1.0
        return round(self.a + (value - self.lo) / span * (self.b - self.a), 1)


def _svg(body: list[str], *, width: float, height: float, label: str, cls: str) -> Markup:
    head = (
        f'<svg class="{cls}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}"'
        f' width="{width:.0f}" height="{height:.0f}" role="img" aria-label="{escape(label)}">'
    )
    return Markup(head + "".join(body) + "</svg>")


def _axes(
    x: Scale, y: Scale, *, y_ticks: Sequence[float], x_label: str, fmt: Callable[[float], str]
) -> list[str]:
    out = [
        f'<line class="axis" x1="{x.a}" y1="{y.a}" x2="{x.b}" y2="{y.a}"/>',
        f'<line class="axis" x1="{x.a}" y1="{y.a}" x2="{x.a}" y2="{y.b}"/>',
    ]
    for tick in y_ticks:
        py = y(tick)
        out.append(f'<line class="grid" x1="{x.a}" y1="{py}" x2="{x.b}" y2="{py}"/>')
        out.append(
            f'<text class="tick" x="{x.a - 4}" y="{py + 3}" text-anchor="end">{escape(fmt(tick))}</text>'
        )
    out.append(
        f'<text class="tick" x="{(x.a + x.b) / 2}" y="{y.a + 26}" text-anchor="middle">{x_label}</text>'
    )
    for gen in _gen_ticks(x):
        out.append(f'<text class="tick" x="{x(gen)}" y="{y.a + 13}" text-anchor="middle">{gen}</text>')
    return out


def _gen_ticks(x: Scale) -> list[int]:
    last = int(x.hi)
    step = max(1, round(last / 10))
    return list(range(0, last + 1, step))


def _title(node: CandidateNode) -> str:
    score = "-" if node.dev_score is None else f"{node.dev_score:.4f}"
    text = f"{node.id} (gen {node.generation}, {node.mark}): dev {score}; {node.description}"
    if node.paired_test:
        text += f"; paired test: {node.paired_test}"
    return str(escape(text))


def trajectory(report: RunReport) -> Markup:
    """Each candidate's dev score by generation, coloured by decision; the best-so-far line; L3 holdout
    points; layer changes as dashed lines; the noise-aware gate's decisions ringed."""
    nodes = [
        n
        for n in report.nodes
        if n.dev_score is not None or n.decision == "invalid" or "screened-out" in n.flags
    ]
    last = max((n.generation for n in report.nodes), default=1) or 1
    scores = [n.dev_score for n in nodes if n.dev_score is not None]
    scores += [p.holdout for p in report.holdout_points if p.holdout is not None]
    lo, hi = score_range(scores)
    x = Scale(0, last, PAD_L, WIDTH - PAD_R)
    y = Scale(lo, hi, HEIGHT - PAD_B, PAD_T)
    fmt = _fmt if hi - lo >= 0.2 else _fine
    body = _axes(x, y, y_ticks=[lo + (hi - lo) * i / 4 for i in range(5)], x_label="generation", fmt=fmt)
    for change in report.layer_changes:
        px = x(change.generation + 0.5)
        label = "layers exhausted" if change.exhausted else f"→ {layer_name(change.layer)}"
        body.append(f'<line class="layer-change" x1="{px}" y1="{y.a}" x2="{px}" y2="{y.b}"/>')
        body.append(f'<text class="annot" x="{px + 3}" y="{y.b + 10}">{escape(label)}</text>')
    best_line = _best_so_far(report.nodes)
    if best_line:
        points = " ".join(f"{x(g)},{y(s)}" for g, s in best_line)
        body.append(f'<polyline class="best-line" points="{points}"/>')
    for node in nodes:
        px = x(node.generation)
        colour = COLOURS.get(node.mark, "#000")
        attrs = f'class="pt mark-{node.mark}" data-node="{escape(node.id)}"'
        if node.dev_score is None:  # not evaluated: no score, drawn under the axis
            body.append(
                f'<g {attrs}><title>{_title(node)}</title><path d="M{px - 3},{y.a + 3}l6,6m0,-6l-6,6"'
                f' stroke="{colour}" stroke-width="2"/></g>'
            )
            continue
        py = y(node.dev_score)
        ring = (
            f'<circle class="paired" cx="{px}" cy="{py}" r="7" fill="none" stroke="#1c7ed6"/>'
            if node.paired_test
            else ""
        )
        body.append(
            f"<g {attrs}><title>{_title(node)}</title>{ring}"
            f'<circle cx="{px}" cy="{py}" r="4" fill="{colour}"/></g>'
        )
    for point in report.holdout_points:
        if point.holdout is None:
            continue
        px, py = x(point.generation), y(point.holdout)
        title = escape(f"L3 on {point.candidate}: holdout {point.holdout:.4f}")
        body.append(
            f'<g class="holdout-pt"><title>{title}</title><path d="M{px},{py - 5}l5,5l-5,5l-5,-5z"'
            f' fill="none" stroke="#862e9c" stroke-width="1.5"/></g>'
        )
    return _svg(body, width=WIDTH, height=HEIGHT, label="score trajectory", cls="chart trajectory")


def _best_so_far(nodes: Sequence[CandidateNode]) -> list[tuple[float, float]]:
    line: list[tuple[float, float]] = []
    for node in nodes:
        if node.decision in ("baseline", "keep") and node.dev_score is not None:
            if line:
                line.append((node.generation, line[-1][1]))
            line.append((node.generation, node.dev_score))
    if line:
        last = max(n.generation for n in nodes)
        line.append((last, line[-1][1]))
    return line


def lineage(report: RunReport) -> Markup:
    """The tree of candidates: x is the generation, y the depth (kept ancestors from the baseline); an edge
    from each parent to its child; nodes coloured by decision."""
    depth: dict[str, int] = {}
    place: dict[str, tuple[int, int]] = {}
    for node in report.nodes:
        d = depth[node.parent_id] + 1 if node.parent_id in depth else 0
        depth[node.id] = d
        place[node.id] = (node.generation, d)
    last = max((g for g, _ in place.values()), default=1) or 1
    deepest = max((d for _, d in place.values()), default=0)
    step_x = max(12.0, min(40.0, (WIDTH - 60) / last))
    width = 40 + step_x * last + 40
    height = 40 + 28 * deepest + 20
    body: list[str] = []
    for node in report.nodes:
        if node.parent_id in place:
            (g0, d0), (g1, d1) = place[node.parent_id], place[node.id]
            body.append(
                f'<line class="edge" x1="{40 + step_x * g0}" y1="{30 + 28 * d0}"'
                f' x2="{40 + step_x * g1}" y2="{30 + 28 * d1}"/>'
            )
    for node in report.nodes:
        g, d = place[node.id]
        colour = COLOURS.get(node.mark, "#000")
        body.append(
            f'<g class="node mark-{node.mark}" data-node="{escape(node.id)}" tabindex="0"><title>{_title(node)}</title>'
            f'<circle cx="{40 + step_x * g}" cy="{30 + 28 * d}" r="6" fill="{colour}"/></g>'
        )
    return _svg(body, width=width, height=height, label="lineage tree", cls="chart lineage")


def ratings_chart(report: RunReport) -> Markup:
    """Each rated candidate's rating after its matches (bars: ± its uncertainty), kept ones filled."""
    points = report.ratings
    ratings = [p.rating for p in points]
    spread = [p.uncertainty for p in points]
    lo = min(r - u for r, u in zip(ratings, spread, strict=True))
    hi = max(r + u for r, u in zip(ratings, spread, strict=True))
    last = max(max(p.generation for p in points), 1)
    x = Scale(0, last, PAD_L, WIDTH - PAD_R)
    y = Scale(lo, hi if hi > lo else lo + 1, HEIGHT - PAD_B, PAD_T)
    body = _axes(
        x,
        y,
        y_ticks=[lo + (hi - lo) * i / 4 for i in range(5)],
        x_label="generation",
        fmt=lambda v: f"{v:.0f}",
    )
    for p in points:
        px = x(p.generation)
        fill = COLOURS["keep"] if p.kept else "#fff"
        title = escape(f"{p.candidate} (gen {p.generation}): rating {p.rating:.1f} ± {p.uncertainty:.1f}")
        body.append(
            f'<g class="rating-pt" data-node="{escape(p.candidate)}"><title>{title}</title>'
            f'<line class="axis" x1="{px}" y1="{y(p.rating - p.uncertainty)}" x2="{px}"'
            f' y2="{y(p.rating + p.uncertainty)}"/>'
            f'<circle cx="{px}" cy="{y(p.rating)}" r="4" fill="{fill}" stroke="{COLOURS["keep"]}"/></g>'
        )
    return _svg(body, width=WIDTH, height=HEIGHT, label="ratings over time", cls="chart ratings")


def spend_chart(report: RunReport, what: str) -> Markup:
    """What the run had spent by each generation: ``tokens``, ``cost`` (dollars) or ``case_runs``."""
    values = {
        "tokens": [float(p.spent.tokens) for p in report.spend],
        "cost": [p.spent.cost_usd for p in report.spend],
        "case_runs": [float(p.spent.case_runs) for p in report.spend],
    }[what]
    gens = [p.generation for p in report.spend]
    height = 160
    last = max([1, *gens])
    hi = max([*values, 0.0]) or 1.0
    x = Scale(0, last, PAD_L + 16, WIDTH - PAD_R)
    y = Scale(0, hi, height - PAD_B, PAD_T)
    fmt = (lambda v: f"${v:.3g}") if what == "cost" else (lambda v: f"{v:.3g}")
    body = _axes(x, y, y_ticks=[hi * i / 2 for i in range(3)], x_label="generation", fmt=fmt)
    if values:
        points = " ".join(f"{x(g)},{y(v)}" for g, v in zip(gens, values, strict=True))
        body.append(f'<polyline class="spend-line" points="{points}"/>')
    return _svg(body, width=WIDTH, height=height, label=f"{what} over time", cls=f"chart spend spend-{what}")


def _fmt(value: float) -> str:
    return f"{value:.2f}"


def _fine(value: float) -> str:
    return f"{value:.3f}"


def score_range(scores: Sequence[float]) -> tuple[float, float]:
    """The score axis: the scores' range with a margin of a tenth of it (at least 0.01 each side), kept within
    [0, 1] when they are: a 0.957 -> 0.974 run is a visible rise, not a flat line at the top of 0-1."""
    if not scores:
        return 0.0, 1.0
    lo, hi = min(scores), max(scores)
    margin = max((hi - lo) / 10, 0.01)
    lo, hi = lo - margin, hi + margin
    if min(scores) >= 0.0 and max(scores) <= 1.0:
        lo, hi = max(0.0, lo), min(1.0, hi)
    return lo, hi
