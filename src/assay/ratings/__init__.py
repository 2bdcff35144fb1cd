"""Rating backends behind one interface: Elo, Glicko-2, Bradley-Terry (choix) and Weng-Lin (openskill).

``RATINGS.get(name)`` returns the backend class; ``make_rating(name)`` builds one with its defaults (through
the one resolver, :data:`RATING_BACKEND`).
"""

from __future__ import annotations

from assay.ratings.base import (
    MIN_COMPARISONS,
    MatchOutcome,
    Rating,
    RatingBackend,
    RatingBackendProtocol,
    confidence,
)
from assay.ratings.bradley_terry import BradleyTerryRating, ConstantAccuracyRanking
from assay.ratings.elo import EloRating
from assay.ratings.glicko2 import Glicko2Rating, Glicko2State, glicko2_period
from assay.ratings.weng_lin import WengLinRating
from assay.registry import Family, Registry, built_from, resolve

RATINGS: Registry[type[RatingBackend]] = Registry("rating backend")
for _backend in (EloRating, Glicko2Rating, BradleyTerryRating, WengLinRating):
    RATINGS.register(_backend.name)(_backend)
RATING_BACKEND: Family[RatingBackend] = Family(
    "rating backend", RatingBackendProtocol, registry=RATINGS, build=built_from(RATINGS)
)


def make_rating(name: str | RatingBackendProtocol) -> RatingBackend:
    """A fresh backend by registry name, with default parameters (unknown names list the known ones), or the
    object given, checked."""
    return resolve(RATING_BACKEND, name)


__all__ = [
    "MIN_COMPARISONS",
    "RATINGS",
    "RATING_BACKEND",
    "BradleyTerryRating",
    "ConstantAccuracyRanking",
    "EloRating",
    "Glicko2Rating",
    "Glicko2State",
    "MatchOutcome",
    "Rating",
    "RatingBackend",
    "RatingBackendProtocol",
    "WengLinRating",
    "confidence",
    "glicko2_period",
    "make_rating",
]
