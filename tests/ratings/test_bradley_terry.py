"""The choix fit against a direct Newton maximum-likelihood fit written here."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from assay.ratings import BradleyTerryRating, MatchOutcome
from assay.ratings.bradley_terry import ConstantAccuracyRanking, win_matrix

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


def outcomes() -> list[MatchOutcome]:
    result = []
    for x, y, wins_x, wins_y in DATA:
        result += [MatchOutcome(x, y, x)] * wins_x + [MatchOutcome(x, y, y)] * wins_y
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
    bt.update(
        [MatchOutcome("champ", "x", "champ")] * 4 + [MatchOutcome("x", "y", "x"), MatchOutcome("y", "x", "y")]
    )
    champ = bt.rating("champ")
    assert math.isfinite(champ.rating) and math.isfinite(champ.uncertainty)
    # The champ-x pair alone would hold 5 vs 1 wins (a gap of ln 5); the λ on every pair, the never-compared
    # champ-y included, pulls the names together a little.
    gap = (champ.rating - bt.rating("x").rating) / SCALE
    assert 0.5 * math.log(5) < gap < math.log(5)


def test_the_pseudo_count_is_on_every_pair_so_unlinked_groups_stay_comparable():
    names = ["a", "b", "c", "d"]
    wins = win_matrix(names, [MatchOutcome("a", "b", "a"), MatchOutcome("c", "d", "c")], 0.5)
    assert wins[0, 2] == wins[2, 0] == 0.5 and wins[0, 0] == 0  # a and c never met: λ each way all the same
    bt = BradleyTerryRating(pseudo_count=0.5, regularization=0.0)
    bt.update([MatchOutcome("a", "b", "a"), MatchOutcome("c", "d", "c")])
    assert bt.rating("a").rating == pytest.approx(bt.rating("c").rating)  # symmetric groups, equal ratings
    assert bt.rating("a").rating > bt.rating("b").rating


def test_ties_and_weights_enter_the_win_matrix():
    wins = win_matrix(
        ["p", "q"], [MatchOutcome("p", "q", None), MatchOutcome("q", "p", "q", weight=2.0)], 0.25
    )
    assert wins.tolist() == [[0.0, 0.75], [2.75, 0.0]]


def test_log_strength_error_is_the_uncertainty_in_nats():
    bt = BradleyTerryRating()
    bt.update(outcomes())
    for name in "abcd":
        assert bt.log_strength_error(name) == pytest.approx(bt.rating(name).uncertainty / SCALE)
    assert bt.log_strength_error("unknown") == pytest.approx(350 / SCALE)


def exact_mean_positions(names, wins, p):
    """Posterior mean positions (0 = best) by enumerating every ordering under a p-correct judge."""
    total, sums = 0.0, np.zeros(len(names))
    for order in itertools.permutations(range(len(names))):
        place = np.argsort(order)
        agree = sum(wins[i, j] for i in range(len(names)) for j in range(len(names)) if place[i] < place[j])
        weight = p**agree * (1 - p) ** (wins.sum() - agree)
        total += weight
        sums += weight * place
    return sums / total


def test_constant_accuracy_posterior_matches_exact_enumeration():
    data = [("a", "b", 3, 1), ("b", "c", 1, 1), ("c", "d", 2, 0), ("a", "d", 0, 1), ("b", "e", 1, 0)]
    results = []
    for x, y, wins_x, wins_y in data:
        results += [MatchOutcome(x, y, x)] * wins_x + [MatchOutcome(x, y, y)] * wins_y
    ranking = ConstantAccuracyRanking(chains=4000, sweeps=30, accuracy=0.75, seed=1)
    ranking.update(results)
    names = ["a", "b", "c", "d", "e"]
    wins = np.zeros((5, 5))
    for o in results:
        wins[names.index(o.winner), names.index(o.b if o.winner == o.a else o.a)] += 1
    exact = exact_mean_positions(names, wins, 0.75)
    scores = ranking.scores()
    assert [-scores[n] for n in names] == pytest.approx(exact.tolist(), abs=0.06)
    assert ranking.accuracy() == 0.75


def test_constant_accuracy_ranking_recovers_order_and_learns_the_accuracy():
    rng = np.random.default_rng(3)
    names = [f"n{i}" for i in range(12)]  # n0 strongest
    ranking = ConstantAccuracyRanking(seed=2)
    for _ in range(40):
        batch = []
        for _ in range(10):
            i, j = rng.choice(12, size=2, replace=False)
            stronger, weaker = names[min(i, j)], names[max(i, j)]
            batch.append(MatchOutcome(stronger, weaker, stronger if rng.random() < 0.8 else weaker))
        ranking.update(batch)
    scores = ranking.scores()
    assert set(scores) == set(names)
    ordered = sorted(names, key=lambda n: -scores[n])
    rho = np.corrcoef([names.index(n) for n in ordered], range(12))[0, 1]
    assert rho > 0.9
    assert 0.7 < ranking.accuracy() < 0.9
    positions = ranking.positions()
    assert all(len(p) == 32 for p in positions.values())  # one position per chain (default 32 chains)
    assert sorted(int(positions[n][0]) for n in names) == list(range(12))  # each chain is an ordering


def test_constant_accuracy_ranking_counts_ties_half_and_weights():
    ranking = ConstantAccuracyRanking(chains=400, accuracy=0.9, seed=0)
    ranking.update([MatchOutcome("p", "q", None)] * 3)
    assert abs(ranking.scores()["p"] - ranking.scores()["q"]) < 0.15  # ties: no side favoured
    ranking.update([MatchOutcome("p", "q", "q", weight=3.0)])
    assert ranking.scores()["q"] > -0.05  # q on top in nearly every chain


def test_constant_accuracy_ranking_rejects_bad_parameters():
    with pytest.raises(ValueError, match="accuracy"):
        ConstantAccuracyRanking(accuracy=0.4)
    with pytest.raises(ValueError, match="chains"):
        ConstantAccuracyRanking(chains=0)
    assert ConstantAccuracyRanking().scores() == {}
