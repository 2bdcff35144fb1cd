from __future__ import annotations

import pytest

from assay.ratings import Glicko2Rating, Glicko2State, MatchOutcome, glicko2_period


def test_glickman_worked_example():
    player = Glicko2State(1500, 200, 0.06)
    games = [
        (Glicko2State(1400, 30), 1.0, 1.0),
        (Glicko2State(1550, 100), 0.0, 1.0),
        (Glicko2State(1700, 300), 0.0, 1.0),
    ]
    after = glicko2_period(player, games, tau=0.5)
    assert after.rating == pytest.approx(1464.06, abs=0.02)
    assert after.rd == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=1e-5)


def test_no_games_only_grows_the_deviation_capped_at_350():
    after = glicko2_period(Glicko2State(1600, 100, 0.06), [])
    assert after.rating == 1600
    assert after.rd == pytest.approx((100**2 + (0.06 * 173.7178) ** 2) ** 0.5, rel=1e-4)
    assert glicko2_period(Glicko2State(), []).rd == 350


def test_weight_two_equals_the_game_played_twice():
    opponent = Glicko2State(1550, 80)
    once = glicko2_period(Glicko2State(), [(opponent, 1.0, 2.0)])
    twice = glicko2_period(Glicko2State(), [(opponent, 1.0, 1.0)] * 2)
    assert once.rating == pytest.approx(twice.rating)
    assert once.rd == pytest.approx(twice.rd)


def test_a_batch_is_one_rating_period():
    glicko = Glicko2Rating()
    glicko.update([MatchOutcome("a", "b", "a"), MatchOutcome("a", "c", "a")])
    # both games used a's start rating: b and c had the same opponent state, so they end equal
    assert glicko.rating("b").rating == pytest.approx(glicko.rating("c").rating)
    before = glicko.rating("c").uncertainty
    glicko.update([MatchOutcome("a", "b", "a")])
    assert glicko.rating("c").uncertainty > before  # c sat out the period
    assert glicko.rating("c").rating == pytest.approx(glicko.state("c").rating)
