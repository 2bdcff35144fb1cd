"""Rating arithmetic of one feedback, delegated to :class:`assay.ratings.EloRating`, and time decay."""

from __future__ import annotations

import math

from assay.ratings.base import MatchOutcome
from assay.ratings.elo import EloRating


class _SeededElo(EloRating):
    """An Elo backend that starts from given ratings instead of everyone at ``start``."""

    def seed(self, name: str, value: float) -> None:
        self._values[name] = value


def elo_pairwise(a: float, b: float, winner: str | None, k: float) -> tuple[float, float]:
    """New ratings of ``a`` and ``b`` after one comparison; ``winner`` is ``"a"``, ``"b"`` or None (tie)."""
    elo = _SeededElo(k=k)
    elo.seed("a", a)
    elo.seed("b", b)
    elo.update([MatchOutcome("a", "b", winner)])
    return elo.rating("a").rating, elo.rating("b").rating


def elo_single(value: float, won: bool, k: float) -> float:
    """The rating after one-sided feedback: ``+0.1·K`` for a winner alone, ``-0.1·K`` for a loser alone."""
    elo = _SeededElo(k=k)
    elo.seed("x", value)
    elo.update_single("x", won)
    return elo.rating("x").rating


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
