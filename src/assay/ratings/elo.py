"""Elo: the online logistic rating with a fixed K factor."""

from __future__ import annotations

import math

from assay.ratings.base import MatchOutcome, RatingBackend


def expected_score(rating_a: float, rating_b: float) -> float:
    """Elo's expected score of a player rated ``rating_a`` against one rated ``rating_b``."""
    return 1.0 / (1.0 + math.pow(10.0, (rating_b - rating_a) / 400.0))


def elo_change(rating_a: float, rating_b: float, score_a: float, k: float, weight: float = 1.0) -> float:
    """What ``a`` gains (and ``b`` loses) from one comparison in which ``a`` scored ``score_a`` (1, 0, 0.5)."""
    return k * weight * (score_a - expected_score(rating_a, rating_b))


def one_sided_change(won: bool, k: float) -> float:
    """One-sided feedback with no opponent: ``+0.1·K`` for a winner alone, ``-0.1·K`` for a loser alone."""
    return (0.1 if won else -0.1) * k


class EloRating(RatingBackend):
    """Classic Elo, updated outcome by outcome in order.

    ``E = 1 / (1 + 10^((Rb - Ra) / 400))`` and ``R' = R + K·w·(S - E)`` with ``S`` 1, 0 or 0.5 for a tie, so
    the sum of ratings is conserved. ``w`` is the outcome's weight. Elo has no uncertainty of its own; the one
    reported is the proxy ``start_uncertainty / sqrt(1 + n)`` (n = comparisons), which shrinks as evidence grows.
    """

    name = "elo"

    def __init__(self, k: float = 32.0, start: float = 1500.0) -> None:
        super().__init__()
        self.k = k
        self.start = start
        self._values: dict[str, float] = {}

    def _value(self, name: str) -> float:
        return self._values.get(name, self.start)

    def _expected(self, a: str, b: str) -> float:
        return expected_score(self._value(a), self._value(b))

    def _update(self, outcomes: list[MatchOutcome]) -> None:
        for outcome in outcomes:
            a, b = self._value(outcome.a), self._value(outcome.b)
            change = elo_change(a, b, outcome.score(outcome.a), self.k, outcome.weight)
            self._values[outcome.a] = self._value(outcome.a) + change
            self._values[outcome.b] = self._value(outcome.b) - change

    def update_single(self, name: str, won: bool) -> None:
        """One-sided feedback with no opponent: ``+0.1·K`` if ``won`` else ``-0.1·K``.

        Counts (wins, losses, comparisons) do not change: this is not a comparison.
        """
        self._values[name] = self._value(name) + one_sided_change(won, self.k)
        self._touch(name)

    def win_probability(self, a: str, b: str) -> float:
        return self._expected(a, b)

    def _estimate(self, name: str) -> tuple[float, float]:
        n = self._counts[name].comparisons
        return self._value(name), self.start_uncertainty / math.sqrt(1 + n)

    def _start(self) -> tuple[float, float]:
        return self.start, self.start_uncertainty
