"""The offline search benchmark's problem families: ``tune/`` is what the search is developed on, ``check/``
(other families, other distributions) is run only to report, never to choose an operator, a weight or a
constant."""

from __future__ import annotations

from pathlib import Path

from .family import CASE_SEEDS, SHAPES, UNSEEN_SEEDS, Family

HALVES = ("tune", "check")
HERE = Path(__file__).resolve().parent

__all__ = ["CASE_SEEDS", "HALVES", "SHAPES", "UNSEEN_SEEDS", "Family", "families"]


def families(half: str | None = None) -> list[Family]:
    """The families of one half (``tune`` or ``check``), or of both, in name order."""
    halves = HALVES if half in (None, "both") else (half,)
    return [
        Family(folder)
        for name in halves
        for folder in sorted((HERE / name).iterdir())
        if (folder / "task.py").exists()
    ]
