"""Glicko-2 (Glickman): ratings with a deviation and a volatility, updated once per rating period."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from assay.ratings.base import MatchOutcome, RatingBackend

SCALE = 400.0 / math.log(10.0)  # 173.7178: Glicko scale <-> Glicko-2 scale
START_RD = 350.0
START_VOLATILITY = 0.06
EPSILON = 1e-6


@dataclass(frozen=True)
class Glicko2State:
    """A player on the Glicko scale: rating (1500-centred), rating deviation and volatility."""

    rating: float = 1500.0
    rd: float = START_RD
    volatility: float = START_VOLATILITY


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / math.pi**2)


def _new_volatility(phi: float, sigma: float, delta: float, v: float, tau: float) -> float:
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta**2 - phi**2 - v - ex) / (2.0 * (phi**2 + v + ex) ** 2) - (x - a) / tau**2

    big_a = a
    if delta**2 > phi**2 + v:
        big_b = math.log(delta**2 - phi**2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def glicko2_period(
    player: Glicko2State, games: Sequence[tuple[Glicko2State, float, float]], tau: float = 0.5
) -> Glicko2State:
    """One rating period for ``player``: ``games`` are (opponent before the period, score, weight).

    Steps 2-8 of Glickman's "Example of the Glicko-2 system"; a weight multiplies a game's terms in ``v``
    and ``Δ`` (weight 2 counts like the same game played twice). No games: only the deviation grows.
    """
    mu, phi, sigma = (player.rating - 1500.0) / SCALE, player.rd / SCALE, player.volatility
    if not games:
        rd = min(math.sqrt(phi * phi + sigma * sigma) * SCALE, START_RD)
        return Glicko2State(player.rating, rd, sigma)
    info = 0.0
    total = 0.0
    for opponent, score, weight in games:
        g = _g(opponent.rd / SCALE)
        expected = 1.0 / (1.0 + math.exp(-g * (mu - (opponent.rating - 1500.0) / SCALE)))
        info += weight * g * g * expected * (1.0 - expected)
        total += weight * g * (score - expected)
    v = 1.0 / info
    sigma_new = _new_volatility(phi, sigma, v * total, v, tau)
    phi_star = math.sqrt(phi * phi + sigma_new * sigma_new)
    phi_new = 1.0 / math.sqrt(1.0 / phi_star**2 + 1.0 / v)
    mu_new = mu + phi_new * phi_new * total
    return Glicko2State(1500.0 + SCALE * mu_new, SCALE * phi_new, sigma_new)


class Glicko2Rating(RatingBackend):
    """Glicko-2 with one ``update`` batch as one rating period (every game in it sees the ratings from
    before the batch). Ratings and uncertainty (the rating deviation) are on the Glicko scale, 1500 ± 350 at
    the start; names known but absent from a batch get a larger deviation, capped at 350.

    ``win_probability`` uses both deviations, ``1 / (1 + exp(-g(sqrt(φa² + φb²))·(μa - μb))``, so that
    ``p(a, b) + p(b, a) == 1``.
    """

    name = "glicko2"

    def __init__(self, tau: float = 0.5) -> None:
        super().__init__()
        self.tau = tau
        self._states: dict[str, Glicko2State] = {}

    def state(self, name: str) -> Glicko2State:
        """The Glicko-2 state of ``name`` (the start state if unknown)."""
        return self._states.get(name, Glicko2State())

    def _update(self, outcomes: list[MatchOutcome]) -> None:
        games: dict[str, list[tuple[Glicko2State, float, float]]] = {}
        for o in outcomes:
            games.setdefault(o.a, []).append((self.state(o.b), o.score(o.a), o.weight))
            games.setdefault(o.b, []).append((self.state(o.a), o.score(o.b), o.weight))
        names = set(self._states) | set(games)
        self._states = {n: glicko2_period(self.state(n), games.get(n, []), self.tau) for n in names}

    def win_probability(self, a: str, b: str) -> float:
        sa, sb = self.state(a), self.state(b)
        phi = math.hypot(sa.rd, sb.rd) / SCALE
        return 1.0 / (1.0 + math.exp(-_g(phi) * (sa.rating - sb.rating) / SCALE))

    def _estimate(self, name: str) -> tuple[float, float]:
        state = self.state(name)
        return state.rating, state.rd
