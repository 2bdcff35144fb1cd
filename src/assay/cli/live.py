"""The live view of ``assay evolve`` in a terminal: generation, layer, best so far, budget used and an estimate
of what is left, redrawn from the run's view (:class:`~assay.loop.state.view.RunView`) while the per-generation lines scroll above it."""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table

from assay.config import EvolveConfig
from assay.layer_names import layer_name
from assay.loop.state.view import RunView
from assay.words import plural


@dataclass(frozen=True)
class RunLimits:
    """The limits a run stops at (None: no limit of that kind)."""

    generations: int
    wall_clock_s: float | None
    case_runs: int | None
    tokens: int | None
    cost_usd: float | None

    @classmethod
    def of(cls, evolve: EvolveConfig, generations: int, wall_clock_s: float | None) -> RunLimits:
        return cls(generations, wall_clock_s, evolve.max_evaluations, evolve.max_tokens, evolve.max_cost_usd)


def _share(used: float, limit: float | None) -> str:
    return "" if not limit else f" / {limit:g} ({used / limit:.0%})"


def time_row(elapsed: float, generation: int, budget: RunLimits) -> str:
    """One time budget: the time used and what is left at most, by whichever limit comes first (the generations
    left at the pace so far, or the wall clock), and which one it is."""
    used = f"{elapsed:.0f}s"
    wall = budget.wall_clock_s
    if not generation:  # no pace yet: only the wall clock bounds the run
        return f"{used} of {wall:g}s (the wall clock)" if wall else used
    more = max(0, budget.generations - generation)
    by_generations = elapsed / generation * more
    if wall and max(0.0, wall - elapsed) < by_generations:
        return f"{used}, ~{max(0.0, wall - elapsed):.0f}s left at most (the wall clock, {wall:g}s)"
    return f"{used}, ~{by_generations:.0f}s left at most ({plural(more, 'more generation')})"


def status_lines(run: RunView | None, budget: RunLimits, elapsed: float) -> list[tuple[str, str]]:
    """The rows of the live view for ``run`` (None: the run has not started yet)."""
    if run is None or run.best is None:
        return [("status", "measuring the baseline…")]
    best = run.best
    generation = run.generation
    spent = run.spent
    score = "-" if best.dev_score is None else f"{best.dev_score:.4f}"
    rows = [
        ("generation", f"{generation} / {budget.generations}"),
        ("layer", "exhausted" if run.layers_exhausted else layer_name(run.layer)),
        (
            "best so far",
            f"{best.candidate_id} dev {score}"
            + (f" holdout {best.holdout_score:.4f}" if best.holdout_score is not None else ""),
        ),
        ("time", time_row(elapsed, generation, budget)),
        ("case runs", f"{spent.case_runs}" + _share(spent.case_runs, budget.case_runs)),
    ]
    if spent.tokens or budget.tokens:
        rows.append(("tokens", f"{spent.tokens}" + _share(spent.tokens, budget.tokens)))
    if spent.cost_usd or budget.cost_usd:
        rows.append(("cost", f"${spent.cost_usd:.4f}" + _share(spent.cost_usd, budget.cost_usd)))
    return rows


class LiveView:
    """A rich renderable that reads the run's view each time it is drawn."""

    def __init__(self, holder: object, budget: RunLimits) -> None:
        self._holder = holder  # anything with a ``view`` attribute (the Evolution)
        self._budget = budget
        self._started = time.monotonic()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        run: RunView | None = getattr(self._holder, "view", None)
        # The run's time moves at each event; between events (a long generation) the clock of this session.
        elapsed = max(run.elapsed if run is not None else 0.0, time.monotonic() - self._started)
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold")
        table.add_column()
        for name, value in status_lines(run, self._budget, elapsed):
            table.add_row(name, value)
        yield table
