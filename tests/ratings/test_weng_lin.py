from __future__ import annotations

import pytest
from openskill.models import PlackettLuce

from assay.ratings import MatchOutcome, WengLinRating


def test_matches_openskill_directly():
    ours = WengLinRating()
    ours.update([MatchOutcome("a", "b", "a"), MatchOutcome("b", "c", None)])
    model = PlackettLuce()
    a, b, c = model.rating(), model.rating(), model.rating()
    [[a], [b]] = model.rate([[a], [b]], ranks=[0, 1])
    [[b], [c]] = model.rate([[b], [c]], ranks=[0, 0])
    for name, player in (("a", a), ("b", b), ("c", c)):
        assert ours.rating(name).rating == pytest.approx(player.mu)
        assert ours.rating(name).uncertainty == pytest.approx(player.sigma)


def test_half_weight_moves_half_as_far():
    full, half = WengLinRating(), WengLinRating()
    full.update([MatchOutcome("a", "b", "a")])
    half.update([MatchOutcome("a", "b", "a", weight=0.5)])
    assert half.rating("a").rating - 25 == pytest.approx((full.rating("a").rating - 25) / 2)


def test_bradley_terry_model_and_unknown_model():
    bt = WengLinRating(model="bradley_terry")
    bt.update([MatchOutcome("a", "b", "a")] * 3)
    assert bt.win_probability("a", "b") > 0.5
    with pytest.raises(ValueError, match="known: plackett_luce, bradley_terry"):
        WengLinRating(model="nope")
