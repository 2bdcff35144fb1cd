"""The rating-backend interface: outcomes of pairwise comparisons in, ratings with uncertainty out."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

MIN_COMPARISONS = 5


@dataclass(frozen=True)
class MatchOutcome:
    """One comparison of ``a`` with ``b``: ``winner`` is ``a``, ``b`` or ``None`` for a tie.

    ``weight`` scales how much the comparison counts (1.0 = one ordinary comparison); ``category`` is a
    free label (the CLI filters on it; backends ignore it).
    """

    a: str
    b: str
    winner: str | None
    category: str | None = None
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not self.a or not self.b:
            raise ValueError("a and b must be non-empty names")
        if self.a == self.b:
            raise ValueError(f"a and b are the same ({self.a!r}); a comparison needs two different names")
        if self.winner is not None and self.winner not in (self.a, self.b):
            raise ValueError(f"winner {self.winner!r} is neither a ({self.a!r}) nor b ({self.b!r})")
        if not (math.isfinite(self.weight) and self.weight > 0):
            raise ValueError(f"weight must be a positive number, got {self.weight!r}")

    def score(self, name: str) -> float:
        """1.0 if ``name`` won, 0.0 if it lost, 0.5 for a tie."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == name else 0.0


@dataclass
class Rating:
    """One name's standing: the rating on the backend's scale, its uncertainty (same scale) and counts."""

    name: str
    rating: float
    uncertainty: float
    wins: int
    losses: int
    ties: int
    comparisons: int
    confidence: float


def confidence(comparisons: int, min_comparisons: int = MIN_COMPARISONS) -> float:
    """A 0..1 trust score in the count of comparisons: 0.5 at ``min_comparisons``, logistic with slope 0.2."""
    return 1.0 / (1.0 + math.exp(-0.2 * (comparisons - min_comparisons)))


@dataclass
class _Counts:
    wins: int = 0
    losses: int = 0
    ties: int = 0

    @property
    def comparisons(self) -> int:
        return self.wins + self.losses + self.ties


@runtime_checkable
class RatingBackendProtocol(Protocol):
    """Rates candidates from pairwise outcomes (the tournament's ratings)."""

    def update(self, outcomes: Sequence[MatchOutcome]) -> None:
        """Rate a batch of outcomes (in order, for online backends)."""
        ...

    def rating(self, name: str) -> Rating:
        """The standing of one name (the start rating for a name never seen)."""
        ...

    def ratings(self) -> dict[str, Rating]:
        """Every rated name's standing."""
        ...

    def win_probability(self, a: str, b: str) -> float:
        """The probability that ``a`` beats ``b``."""
        ...


class RatingBackend(ABC):
    """Rates names from pairwise outcomes.

    Subclasses implement ``_update`` (the batch, after counting), ``win_probability`` and ``_estimate``
    (rating and uncertainty of a known name). Counts, ``ratings``, ``rating`` and ``leaderboard`` are shared.
    A name never seen has ``start_rating`` and ``start_uncertainty``.
    """

    name: ClassVar[str]
    start_rating: ClassVar[float] = 1500.0
    start_uncertainty: ClassVar[float] = 350.0

    def __init__(self) -> None:
        self._counts: dict[str, _Counts] = {}

    def update(self, outcomes: Sequence[MatchOutcome]) -> None:
        """Rate a batch of outcomes (in order, for online backends)."""
        outcomes = list(outcomes)
        for outcome in outcomes:
            a = self._counts.setdefault(outcome.a, _Counts())
            b = self._counts.setdefault(outcome.b, _Counts())
            if outcome.winner is None:
                a.ties += 1
                b.ties += 1
            elif outcome.winner == outcome.a:
                a.wins += 1
                b.losses += 1
            else:
                b.wins += 1
                a.losses += 1
        if outcomes:
            self._update(outcomes)

    def _touch(self, name: str) -> None:
        """Make ``name`` known without counting a comparison (for one-sided feedback)."""
        self._counts.setdefault(name, _Counts())

    @abstractmethod
    def _update(self, outcomes: list[MatchOutcome]) -> None: ...

    @abstractmethod
    def _estimate(self, name: str) -> tuple[float, float]:
        """(rating, uncertainty) of a name (start values if unknown)."""

    @abstractmethod
    def win_probability(self, a: str, b: str) -> float:
        """The probability that ``a`` beats ``b`` (a tie counted as half); ``p(a, b) + p(b, a) == 1``."""

    def rating(self, name: str) -> Rating:
        """The standing of one name; a name never seen gets the start rating and zero counts."""
        counts = self._counts.get(name, _Counts())
        value, uncertainty = self._estimate(name) if name in self._counts else self._start()
        return Rating(
            name=name,
            rating=value,
            uncertainty=uncertainty,
            wins=counts.wins,
            losses=counts.losses,
            ties=counts.ties,
            comparisons=counts.comparisons,
            confidence=confidence(counts.comparisons),
        )

    def _start(self) -> tuple[float, float]:
        return self.start_rating, self.start_uncertainty

    def ratings(self) -> dict[str, Rating]:
        """Every name seen so far, with rating, uncertainty and counts."""
        return {name: self.rating(name) for name in self._counts}

    def leaderboard(self) -> list[Rating]:
        """The ratings, best first (ties in rating broken by name)."""
        return sorted(self.ratings().values(), key=lambda r: (-r.rating, r.name))
