"""Replaying the feedback log: the same events rated by another backend, or with older feedback weighing less."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from assay.ratings import RATINGS, EloRating, Rating, RatingBackend
from assay.ratings.base import MatchOutcome
from assay.registry import UnknownName
from assay.serve.errors import ApiError
from assay.serve.scoring import decay_weight

DAY = 86_400.0


def make_backend(name: str, k: float, start: float) -> RatingBackend:
    """A fresh rating backend by registry name (Elo with the service's K and start)."""
    try:
        cls = RATINGS.get(name)
    except UnknownName as exc:
        raise ApiError("unknown_backend", str(exc)) from None
    return EloRating(k=k, start=start) if cls is EloRating else cls()


def replay(
    events: Sequence[dict[str, Any]],
    backend: RatingBackend,
    half_life_days: float | None = None,
    now: float | None = None,
) -> list[Rating]:
    """Rate ``events`` (rows of the event log, oldest first) with ``backend`` and return its leaderboard.

    A comparison's weight is its confidence times ``0.5^(age / half-life)``; feedback with no weight left
    is skipped. One-sided feedback moves Elo by ``±0.1·K·weight`` and is ignored by backends that only
    rate comparisons.
    """
    if half_life_days is not None and not half_life_days > 0:
        raise ApiError("invalid_request", f"half_life_days must be positive, got {half_life_days!r}")
    half_life = None if half_life_days is None else half_life_days * DAY
    now = time.time() if now is None else now
    for event in events:
        weight = float(event["confidence"]) * decay_weight(now - float(event["time"]), half_life)
        if weight <= 0:
            continue
        winner, loser = event["winner"], event["loser"]
        if winner is not None and loser is not None:
            outcome_winner = None if event["kind"] == "tie" else winner
            backend.update([MatchOutcome(winner, loser, outcome_winner, event["category"], weight)])
        elif isinstance(backend, EloRating):
            name = winner if winner is not None else loser
            k = backend.k
            backend.k = k * weight
            backend.update_single(name, won=winner is not None)
            backend.k = k
    return backend.leaderboard()
