"""``assay rate``: a leaderboard from a file of pairwise outcomes."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from assay.cli.console import LazyConsole
from assay.errors import AssayError

out = LazyConsole()
# Spelled out rather than read from the registry: importing the backends (numpy) would slow every `assay`
# start-up; tests/cli/test_rate.py checks that the list matches the registry.
BACKENDS = ("bradley_terry", "elo", "glicko2", "weng_lin")


def rate_command(
    file: Path = typer.Argument(..., help="Outcomes: CSV with header a,b,winner[,category,weight] or JSONL."),
    backend: str = typer.Option(
        "elo", "--backend", "-b", help=f"Rating backend: {', '.join(BACKENDS)}.", envvar="ASSAY_RATING"
    ),
    category: str | None = typer.Option(None, "--category", help="Rate only the outcomes of this category."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Rate the names in a file of pairwise outcomes (winner: a name, `tie` or empty) and print a leaderboard."""
    from assay.ratings import make_rating
    from assay.ratings.io import filter_category, read_outcomes
    from assay.ratings.leaderboard import leaderboard_records, leaderboard_table
    from assay.registry import UnknownName

    try:
        rating = make_rating(backend)
    except UnknownName as exc:
        raise AssayError(str(exc)) from None
    outcomes = read_outcomes(file)
    chosen = filter_category(outcomes, category)
    if not chosen:
        if category is None:
            raise AssayError(f"{file}: no outcomes")
        known = sorted({o.category for o in outcomes if o.category is not None})
        raise AssayError(
            f"{file}: no outcomes in category {category!r}; known: {', '.join(known) or '(none)'}"
        )
    rating.update(chosen)
    board = rating.leaderboard()
    if as_json:
        report = {
            "backend": rating.name,
            "category": category,
            "outcomes": len(chosen),
            "leaderboard": leaderboard_records(board),
        }
        print(json.dumps(report, indent=2))
        return
    title = f"{rating.name} ratings, {len(chosen)} outcomes" + (f", category {category}" if category else "")
    out.print(leaderboard_table(board, title=title))


def register(app: typer.Typer) -> None:
    """Add the ``rate`` command to ``app``."""
    app.command("rate")(rate_command)
