"""Rating arithmetic of one feedback, with the functions :class:`assay.ratings.EloRating` updates by, and time
decay."""

from __future__ import annotations

import math

from assay.ratings.elo import elo_change, one_sided_change


def elo_pairwise(a: float, b: float, winner: str | None, k: float) -> tuple[float, float]:
    """New ratings of ``a`` and ``b`` after one comparison; ``winner`` is ``"a"``, ``"b"`` or None (tie)."""
    change = elo_change(a, b, 0.5 if winner is None else 1.0 if winner == "a" else 0.0, k)
    return a + change, b - change


def elo_single(value: float, won: bool, k: float) -> float:
    """The rating after one-sided feedback: ``+0.1·K`` for a winner alone, ``-0.1·K`` for a loser alone."""
    return value + one_sided_change(won, k)


def decayed(rating: float, prior: float, elapsed: float, half_life: float | None) -> float:
    """``rating`` pulled toward ``prior``: the gap halves every ``half_life`` seconds (None: no decay)."""
    if half_life is None or elapsed <= 0:
        return rating
    return prior + (rating - prior) * math.pow(0.5, elapsed / half_life)


def decay_weight(age: float, half_life: float | None) -> float:
    """The weight of an outcome ``age`` seconds old when replaying with a half-life (1.0 without decay)."""
    if half_life is None or age <= 0:
        return 1.0
    return math.pow(0.5, age / half_life)
