from __future__ import annotations

import math

import pytest

from assay.ratings import EloRating, MatchOutcome


def test_one_win_between_equals_moves_half_k():
    elo = EloRating()
    elo.update([MatchOutcome("a", "b", "a")])
    assert elo.rating("a").rating == pytest.approx(1516.0)
    assert elo.rating("b").rating == pytest.approx(1484.0)


def test_expected_score_formula_and_sum_conserved():
    elo = EloRating(k=20)
    elo.update(
        [MatchOutcome("a", "b", "a")] * 5 + [MatchOutcome("b", "c", None), MatchOutcome("c", "a", "c")]
    )
    ratings = {n: r.rating for n, r in elo.ratings().items()}
    assert sum(ratings.values()) == pytest.approx(3 * 1500.0)
    expected = 1 / (1 + 10 ** ((ratings["b"] - ratings["a"]) / 400))
    assert elo.win_probability("a", "b") == pytest.approx(expected)


def test_tie_between_unequal_moves_toward_each_other():
    elo = EloRating()
    elo.update([MatchOutcome("a", "b", "a")] * 3)
    gap = elo.rating("a").rating - elo.rating("b").rating
    elo.update([MatchOutcome("a", "b", None)])
    assert 0 < elo.rating("a").rating - elo.rating("b").rating < gap


def test_weight_scales_k():
    light, heavy = EloRating(), EloRating()
    light.update([MatchOutcome("a", "b", "a", weight=0.5)])
    heavy.update([MatchOutcome("a", "b", "a", weight=2.0)])
    assert light.rating("a").rating == pytest.approx(1508.0)
    assert heavy.rating("a").rating == pytest.approx(1532.0)


def test_update_single_moves_a_tenth_of_k_and_counts_nothing():
    elo = EloRating()
    elo.update_single("a", won=True)
    elo.update_single("b", won=False)
    assert elo.rating("a").rating == pytest.approx(1503.2)
    assert elo.rating("b").rating == pytest.approx(1496.8)
    assert elo.rating("a").comparisons == 0
    assert [r.name for r in elo.leaderboard()] == ["a", "b"]


def test_uncertainty_proxy():
    elo = EloRating()
    elo.update([MatchOutcome("a", "b", "a")] * 8)
    assert elo.rating("a").uncertainty == pytest.approx(350 / math.sqrt(9))


def test_the_functions_elo_updates_by_give_the_backends_ratings_to_the_bit():
    from assay.ratings.elo import elo_change, expected_score, one_sided_change

    elo = EloRating(k=24.0)
    elo.update([MatchOutcome("a", "b", "a"), MatchOutcome("b", "c", None, weight=0.5)])
    elo.update_single("c", False)
    a = b = c = 1500.0
    change = elo_change(a, b, 1.0, 24.0)
    a, b = a + change, b - change
    change = elo_change(b, c, 0.5, 24.0, weight=0.5)
    b, c = b + change, c - change
    c += one_sided_change(False, 24.0)
    assert (elo.rating("a").rating, elo.rating("b").rating, elo.rating("c").rating) == (a, b, c)
    assert expected_score(1600.0, 1400.0) == pytest.approx(1 / (1 + 10 ** (-200 / 400)))
    assert expected_score(1600.0, 1400.0) + expected_score(1400.0, 1600.0) == pytest.approx(1.0)
