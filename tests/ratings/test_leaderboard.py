from __future__ import annotations

from rich.console import Console

from assay.ratings import EloRating, MatchOutcome
from assay.ratings.leaderboard import leaderboard_records, leaderboard_table


def test_table_and_records():
    elo = EloRating()
    elo.update([MatchOutcome("alpha", "beta", "alpha"), MatchOutcome("alpha", "beta", None)])
    board = elo.leaderboard()
    records = leaderboard_records(board)
    assert [(r["rank"], r["name"], r["wins"], r["ties"]) for r in records] == [
        (1, "alpha", 1, 1),
        (2, "beta", 0, 1),
    ]
    console = Console(width=120, record=True)
    console.print(leaderboard_table(board, title="elo"))
    text = console.export_text()
    assert "± 202.1" in text and "1/0/1" in text and "0/1/1" in text
    assert text.index("alpha") < text.index("beta")
