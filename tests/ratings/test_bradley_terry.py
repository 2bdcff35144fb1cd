"""The choix fit against a direct Newton maximum-likelihood fit written here."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.ratings import BradleyTerryRating, Outcome
from assay.ratings.bradley_terry import win_matrix

SCALE = 400 / math.log(10)


def newton_fit(wins: np.ndarray, steps: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Maximise sum W_ij log sigmoid(s_i - s_j) with s_0 fixed; return centred s and standard errors."""
    n = len(wins)
    s = np.zeros(n)
    totals = wins + wins.T
    for _ in range(steps):
        p = 1 / (1 + np.exp(s[None, :] - s[:, None]))  # p[i, j] = P(i beats j)
        grad = wins.sum(axis=1) - (totals * p).sum(axis=1)
        w = totals * p * (1 - p)
        hess = np.diag(w.sum(axis=1)) - w
        step = np.linalg.solve(hess[1:, 1:], grad[1:])
        s[1:] += step
        if np.abs(step).max() < 1e-13:
            break
    s -= s.mean()
    p = 1 / (1 + np.exp(s[None, :] - s[:, None]))
    w = totals * p * (1 - p)
    errors = np.sqrt(np.diag(np.linalg.pinv(np.diag(w.sum(axis=1)) - w)))
    return s, errors


DATA = [
    ("a", "b", 7, 3),
    ("b", "c", 6, 4),
    ("a", "c", 8, 2),
    ("c", "d", 5, 5),
    ("b", "d", 3, 1),
    ("d", "a", 1, 4),
]


def outcomes() -> list[Outcome]:
    result = []
    for x, y, wins_x, wins_y in DATA:
        result += [Outcome(x, y, x)] * wins_x + [Outcome(x, y, y)] * wins_y
    return result


@pytest.mark.parametrize("pseudo_count", [0.0, 0.5])
def test_matches_a_direct_maximum_likelihood_fit(pseudo_count):
    bt = BradleyTerryRating(pseudo_count=pseudo_count, regularization=0.0)
    bt.update(outcomes())
    names = ["a", "b", "c", "d"]
    s, errors = newton_fit(win_matrix(names, outcomes(), pseudo_count))
    board = bt.leaderboard()
    assert [r.name for r in board] == [names[i] for i in np.argsort(-s)]
    for i, name in enumerate(names):
        assert bt.rating(name).rating == pytest.approx(1500 + SCALE * s[i], abs=0.05)
        assert bt.rating(name).uncertainty == pytest.approx(SCALE * errors[i], rel=1e-3)
    assert bt.win_probability("a", "d") == pytest.approx(1 / (1 + math.exp(s[3] - s[0])), abs=1e-4)
    assert sum(r.rating for r in board) == pytest.approx(4 * 1500, abs=1e-6)


def test_pseudo_count_gives_an_unbeaten_name_a_finite_rating():
    bt = BradleyTerryRating(pseudo_count=1.0)
    bt.update([Outcome("champ", "x", "champ")] * 4 + [Outcome("x", "y", "x"), Outcome("y", "x", "y")])
    champ = bt.rating("champ")
    assert math.isfinite(champ.rating) and math.isfinite(champ.uncertainty)
    # the champ-x pair alone holds 5 vs 1 wins: log-strength gap about ln 5
    gap = (champ.rating - bt.rating("x").rating) / SCALE
    assert gap == pytest.approx(math.log(5), abs=0.05)


def test_ties_and_weights_enter_the_win_matrix():
    wins = win_matrix(["p", "q"], [Outcome("p", "q", None), Outcome("q", "p", "q", weight=2.0)], 0.25)
    assert wins.tolist() == [[0.0, 0.75], [2.75, 0.0]]
