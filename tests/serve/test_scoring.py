"""Rating arithmetic of one feedback (through EloRating) and the decay curve."""

from __future__ import annotations

import pytest

from assay.serve.scoring import decay_weight, decayed, elo_pairwise, elo_single


def test_pairwise_follows_the_elo_formula_and_conserves_the_sum() -> None:
    expected_a = 1 / (1 + 10 ** ((1400 - 1600) / 400))
    a, b = elo_pairwise(1600.0, 1400.0, "a", 32.0)
    assert a == pytest.approx(1600 + 32 * (1 - expected_a))
    assert a + b == pytest.approx(3000.0)
    lower, upper = elo_pairwise(1600.0, 1400.0, None, 32.0)
    assert lower < 1600 and upper > 1400 and lower + upper == pytest.approx(3000.0)
    upset = elo_pairwise(1600.0, 1400.0, "b", 16.0)
    assert upset[1] - 1400 == pytest.approx(16 * expected_a)


def test_one_sided_feedback_is_a_tenth_of_k() -> None:
    assert elo_single(1500.0, True, 32.0) == pytest.approx(1503.2)
    assert elo_single(1500.0, False, 16.0) == pytest.approx(1498.4)


def test_decay_halves_the_gap_every_half_life() -> None:
    assert decayed(1600.0, 1500.0, 10.0, 10.0) == pytest.approx(1550.0)
    assert decayed(1600.0, 1500.0, 20.0, 10.0) == pytest.approx(1525.0)
    assert decayed(1400.0, 1500.0, 10.0, None) == 1400.0
    assert decay_weight(30.0, 10.0) == pytest.approx(0.125) and decay_weight(5.0, None) == 1.0
