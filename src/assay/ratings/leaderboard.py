"""Render ratings as a rich table or as JSON-ready records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from rich.table import Table

from assay.ratings.base import Rating

COLUMNS = ("rank", "name", "rating", "±", "W/L/T", "comparisons", "confidence")


def leaderboard_records(board: Sequence[Rating]) -> list[dict[str, Any]]:
    """The leaderboard as plain dicts (rank first, then every Rating field), best first."""
    return [{"rank": rank, **asdict(rating)} for rank, rating in enumerate(board, start=1)]


def leaderboard_table(board: Sequence[Rating], title: str | None = None) -> Table:
    """A table: rank, name, rating, ± uncertainty, W/L/T, comparisons, confidence."""
    table = Table(title=title, header_style="bold")
    for column in COLUMNS:
        table.add_column(column, justify="left" if column == "name" else "right")
    for rank, r in enumerate(board, start=1):
        table.add_row(
            str(rank),
            r.name,
            f"{r.rating:.1f}",
            f"± {r.uncertainty:.1f}",
            f"{r.wins}/{r.losses}/{r.ties}",
            str(r.comparisons),
            f"{r.confidence:.2f}",
        )
    return table
