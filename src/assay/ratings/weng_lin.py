"""Weng-Lin (``openskill``): Bayesian online ratings with a mean and a standard deviation."""

from __future__ import annotations

from typing import Any

from assay.ratings.base import MatchOutcome, RatingBackend

MODELS = {"plackett_luce": "PlackettLuce", "bradley_terry": "BradleyTerryFull"}
MIN_SIGMA = 1e-3


class WengLinRating(RatingBackend):
    """Weng-Lin ratings via ``openskill`` (Plackett-Luce by default, or ``model="bradley_terry"``), updated
    outcome by outcome in order. ``rating`` is ``mu`` (start 25), ``uncertainty`` is ``sigma`` (start 25/3);
    a conservative score is ``mu - 3·sigma``. A tie is a shared rank. A weight ``w`` moves mu and sigma by
    ``w`` times the change openskill computes for one comparison (sigma kept above 0.001).
    """

    name = "weng_lin"
    start_rating = 25.0
    start_uncertainty = 25.0 / 3.0

    def __init__(self, model: str = "plackett_luce") -> None:
        super().__init__()
        if model not in MODELS:
            raise ValueError(f"unknown openskill model {model!r}; known: {', '.join(MODELS)}")
        from openskill import models  # lazy: keeps `assay` start-up fast for other commands

        self.model = getattr(models, MODELS[model])()
        self._players: dict[str, Any] = {}

    def _player(self, name: str) -> Any:
        player = self._players.get(name)
        return player if player is not None else self.model.rating(name=name)

    def _update(self, outcomes: list[MatchOutcome]) -> None:
        for o in outcomes:
            before = [self._player(o.a), self._player(o.b)]
            ranks = [0, 0] if o.winner is None else ([0, 1] if o.winner == o.a else [1, 0])
            [[new_a], [new_b]] = self.model.rate([[p] for p in before], ranks=ranks)
            for name, old, new in ((o.a, before[0], new_a), (o.b, before[1], new_b)):
                mu = old.mu + o.weight * (new.mu - old.mu)
                sigma = max(old.sigma + o.weight * (new.sigma - old.sigma), MIN_SIGMA)
                self._players[name] = self.model.rating(mu=mu, sigma=sigma, name=name)

    def win_probability(self, a: str, b: str) -> float:
        return float(self.model.predict_win([[self._player(a)], [self._player(b)]])[0])

    def _estimate(self, name: str) -> tuple[float, float]:
        player = self._player(name)
        return float(player.mu), float(player.sigma)
