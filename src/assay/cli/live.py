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


def status_lines(run: RunView | None, budget: RunLimits, elapsed: float) -> list[tuple[str, str]]:
    """The rows of the live view for ``run`` (None: the run has not started yet)."""
    if run is None or run.best is None:
        return [("status", "measuring the baseline…")]
    best = run.best
    generation = run.generation
    per_generation = elapsed / generation if generation else None
    left = max(0, budget.generations - generation)
    estimate = "-"
    if per_generation is not None:
        seconds = per_generation * left
        if budget.wall_clock_s:
            seconds = min(seconds, max(0.0, budget.wall_clock_s - elapsed))
        estimate = f"~{seconds:.0f}s for {left} more generations at most"
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
        ("time", f"{elapsed:.0f}s" + _share(elapsed, budget.wall_clock_s)),
        ("case runs", f"{spent.case_runs}" + _share(spent.case_runs, budget.case_runs)),
    ]
    if spent.tokens or budget.tokens:
        rows.append(("tokens", f"{spent.tokens}" + _share(spent.tokens, budget.tokens)))
    if spent.cost_usd or budget.cost_usd:
        rows.append(("cost", f"${spent.cost_usd:.4f}" + _share(spent.cost_usd, budget.cost_usd)))
    rows.append(("left", estimate))
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
