"""The permutation test of a holdout gain against a dev gain: exact where the splits can be counted, sampled
(seeded) where they cannot, checked against the hypergeometric law that pass/fail gains follow."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import hypergeom

from assay.stats.shortfall import RESAMPLES, shortfall_p_values


def passes(gained: int, cases: int) -> list[float]:
    """Pass gains of ``cases`` cases, the first ``gained`` of which went from fail to pass."""
    return [1.0] * gained + [0.0] * (cases - gained)


def test_a_holdout_that_gained_nothing_beside_a_dev_that_gained_everywhere() -> None:
    # Seven pooled cases, five gained: the two holdout cases are the two that did not in 1 split of C(7, 2) = 21.
    assert shortfall_p_values(passes(5, 5), passes(0, 2)).tolist() == pytest.approx([1 / 21])


@pytest.mark.parametrize(("dev", "holdout", "gained"), [(14, 4, 7), (2, 6, 3), (14, 4, 0)])
def test_exact_p_values_are_the_hypergeometric_tail(dev: int, holdout: int, gained: int) -> None:
    """Pass gains of 0 and 1: the holdout's count of gains is hypergeometric given the pooled count, whichever
    side is the smaller one enumerated (6 holdout cases beside 2 dev cases enumerates the dev side)."""
    for seen in range(max(0, gained - dev), min(gained, holdout) + 1):
        dev_gains, holdout_gains = passes(gained - seen, dev), passes(seen, holdout)
        expected = hypergeom.cdf(seen, dev + holdout, gained, holdout)
        assert shortfall_p_values(dev_gains, holdout_gains)[0] == pytest.approx(expected)


def test_sampled_p_values_are_close_to_the_exact_law_and_the_same_each_time() -> None:
    dev, holdout, gained = 140, 40, 60  # C(180, 40) splits: sampled
    for seen in (5, 9, 13):
        dev_gains, holdout_gains = passes(gained - seen, dev), passes(seen, holdout)
        p = shortfall_p_values(dev_gains, holdout_gains)[0]
        exact = hypergeom.cdf(seen, dev + holdout, gained, holdout)
        assert p == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / RESAMPLES) + 1 / RESAMPLES)
        assert p >= 1 / (RESAMPLES + 1)  # a Monte Carlo p-value is never 0
        assert (
            shortfall_p_values(dev_gains, holdout_gains)[0] == p
        )  # seeded: the same gains, the same verdict


def test_each_measure_gets_its_own_p_value_from_the_same_splits() -> None:
    rng = np.random.default_rng(3)
    scores = rng.normal(0.02, 0.01, 18)
    dev = np.column_stack([passes(7, 14), scores[:14]])
    lower = np.column_stack([passes(0, 4), scores[14:] - 0.05])  # the holdout's scores fell
    p_pass, p_score = shortfall_p_values(dev, lower)
    assert p_pass == pytest.approx(hypergeom.cdf(0, 18, 7, 4))
    assert p_score == pytest.approx(1 / 3060)  # the lowest four of 18: the one split of C(18, 4) that low
    equal = shortfall_p_values(dev[:, 1], scores[14:] + 0.05)  # higher on holdout: no shortfall at all
    assert equal.tolist() == [1.0]


def test_gains_that_are_all_equal_show_no_shortfall() -> None:
    assert shortfall_p_values([0.0] * 14, [0.0] * 4).tolist() == [1.0]
    assert shortfall_p_values([0.01] * 35, [0.01] * 10).tolist() == [1.0]  # sampled: ties count as extreme


@pytest.mark.parametrize(
    ("dev", "holdout", "message"),
    [
        ([], [1.0], "dev gains need at least one case"),
        ([1.0], np.zeros((0, 2)), "holdout gains need at least one case"),
        ([[1.0, 0.1]], [[1.0]], "different numbers of measures"),
    ],
)
def test_gains_without_cases_or_with_unequal_measures_are_refused(
    dev: object, holdout: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        shortfall_p_values(dev, holdout)
