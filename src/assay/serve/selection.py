"""Choosing one variant among candidates from their ratings, optionally cheaper ones first.

``p_i = 10^(R_i/400) / Σ_j 10^(R_j/400)``; with a cost weight and a scaling above 0 the score becomes
``p_i · (1 + (1 - norm_cost_i) · cost_weight · scaling)``. ``norm_cost_i`` is, by the ``seed`` formula (the
semantic router's), ``(cost_i - min) / (max - min)`` with no change at all when every cost is equal; by the
``relative`` formula, ``cost_i / max`` (0 when all are free). The highest score wins (ties broken by rating,
then name), or one is drawn in proportion to the scores with ``strategy="sample"``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from assay.ratings.base import confidence


@dataclass(frozen=True)
class Contender:
    """A candidate variant as selection sees it: its rating, where the rating came from, cost and counts."""

    name: str
    rating: float
    source: str
    cost_per_1m: float
    comparisons: int


@dataclass(frozen=True)
class Scored:
    """A contender with its selection probability and cost-adjusted score."""

    contender: Contender
    probability: float
    score: float


def probabilities(ratings: Sequence[float]) -> list[float]:
    """``10^(R_i/400)`` normalised to sum to 1 (computed from the largest rating, so it never overflows)."""
    if not ratings:
        return []
    top = max(ratings)
    weights = [math.pow(10.0, (r - top) / 400.0) for r in ratings]
    total = math.fsum(weights)
    return [w / total for w in weights]


def normalised_costs(costs: Sequence[float], formula: str = "seed") -> list[float] | None:
    """Costs on 0 (cheapest) .. 1; None when the formula leaves the scores alone (``seed``, all costs equal)."""
    if not costs:
        return []
    most = max(costs)
    if formula == "relative":
        return [c / most if most > 0 else 0.0 for c in costs]
    least = min(costs)
    if most == least:
        return None
    return [(c - least) / (most - least) for c in costs]


def score(
    contenders: Sequence[Contender], cost_weight: float = 0.0, scaling: float = 0.0, formula: str = "seed"
) -> list[Scored]:
    """Each contender's probability and its cost-adjusted score, in the given order."""
    probs = probabilities([c.rating for c in contenders])
    norms = normalised_costs([c.cost_per_1m for c in contenders], formula)
    lift = cost_weight * scaling
    if norms is None or lift <= 0:
        return [Scored(c, p, p) for c, p in zip(contenders, probs, strict=True)]
    return [
        Scored(c, p, p * (1.0 + (1.0 - n) * lift)) for c, p, n in zip(contenders, probs, norms, strict=True)
    ]


def choose(scored: Sequence[Scored], strategy: str = "best", rng: random.Random | None = None) -> Scored:
    """The chosen one: highest score (``best``) or drawn in proportion to the scores (``sample``)."""
    if strategy == "sample":
        draw = (rng or random.Random()).random() * math.fsum(s.score for s in scored)
        for item in scored:
            draw -= item.score
            if draw <= 0:
                return item
        return scored[-1]
    return min(scored, key=lambda s: (-s.score, -s.contender.rating, s.contender.name))


def reasoning(chosen: Scored, category: str | None, wins: int, decided: int) -> str:
    """The router's line: ``[Category 'x': ]Selected based on Elo rating 1568.0 (win rate: 20/30)``.

    ``decided`` counts wins, losses and ties of the row the rating came from.
    """
    line = f"Selected based on Elo rating {chosen.contender.rating:.1f} (win rate: {wins}/{decided})"
    return f"Category '{category}': {line}" if category else line


def detail(chosen: Scored, count: int, category: str | None, cost_weight: float, min_comparisons: int) -> str:
    """One line with the figures behind the choice: candidates, rating source, probability, cost, trust."""
    c = chosen.contender
    where = f" in category {category!r}" if category else ""
    fallback = "" if category is None or c.source == "category" else f", {c.source} rating used"
    cost = f", cost-adjusted score {chosen.score:.3f} (cost_weight {cost_weight:g})" if cost_weight else ""
    trust = confidence(c.comparisons, min_comparisons)
    return (
        f"{c.name} chosen among {count} candidate(s){where}: rating {c.rating:.1f}{fallback}, "
        f"p={chosen.probability:.3f}{cost}, {c.comparisons} comparison(s), confidence {trust:.2f}"
    )
