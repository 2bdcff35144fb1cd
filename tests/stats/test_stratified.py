import itertools
import math

import pytest
from scipy import stats

from assay.stats import case_regressions, holm, mean_difference, stratified_test


def brute_force(strata):
    """Exact P(S >= s) and P(S <= s) by enumerating every relabelling of the runs within each stratum."""
    observed = sum(sum(new) for _, new in strata)
    totals, weight = [], 0
    per_stratum = []
    for old, new in strata:
        pooled = [*old, *new]
        per_stratum.append(
            [sum(pooled[i] for i in pick) for pick in itertools.combinations(range(len(pooled)), len(new))]
        )
    for combo in itertools.product(*per_stratum):
        totals.append(sum(combo))
        weight += 1
    return sum(t >= observed for t in totals) / weight, sum(t <= observed for t in totals) / weight


def test_one_stratum_matches_fisher_exact():
    parent, candidate = [1, 0, 0, 0, 1], [1, 1, 1, 0]
    result = stratified_test([(parent, candidate)])
    table = [[3, 1], [2, 3]]  # candidate passes/fails, parent passes/fails
    assert result.exact
    assert result.p_better == pytest.approx(stats.fisher_exact(table, alternative="greater").pvalue)
    assert result.p_worse == pytest.approx(stats.fisher_exact(table, alternative="less").pvalue)


def test_several_strata_match_full_enumeration():
    strata = [([1, 1, 0], [1]), ([0, 0, 0], [1, 1, 0]), ([1, 0, 1], [1, 1, 1, 1]), ([0, 1], [1, 0])]
    result = stratified_test(strata)
    better, worse = brute_force(strata)
    assert result.p_better == pytest.approx(better)
    assert result.p_worse == pytest.approx(worse)
    assert result.z > 0


def test_unanimous_strata_carry_no_weight():
    strata = [([1, 0, 1], [1, 1, 1]), ([0, 0, 0], [1, 0, 1])]
    with_deterministic = [*strata, *[([1, 1, 1], [1])] * 10, *[([0, 0, 0], [0])] * 10]
    assert stratified_test(with_deterministic) == stratified_test(strata)
    assert stratified_test([([1, 1], [1])]).p_better == 1.0


def test_mid_p_removes_half_the_observed_point():
    strata = [([1, 0, 0], [1, 1, 0])]
    exact, mid = stratified_test(strata), stratified_test(strata, mid_p=True)
    point = exact.p_better + exact.p_worse - 1  # P(S = s)
    assert mid.p_better == pytest.approx(exact.p_better - point / 2)


def test_scores_use_the_normal_approximation():
    result = stratified_test([([0.2, 0.4, 0.3], [0.8, 0.9, 0.7]), ([0.5, 0.6], [0.9, 0.8])])
    assert not result.exact
    assert result.p_better == pytest.approx(stats.norm.sf(result.z))
    assert result.p_better < 0.05


def test_holm_step_down():
    assert holm({"a": 0.01, "b": 0.04, "c": 0.03}, 0.05) == ["a"]
    assert holm({"a": 0.01, "b": 0.02, "c": 0.03}, 0.05) == ["a", "b", "c"]
    assert holm({}, 0.05) == []


def test_case_regressions_need_significance_after_correction():
    parent = {"x": [1.0] * 6, "y": [1.0, 1.0, 0.0], "z": [0.0, 0.0, 0.0]}
    candidate = {"x": [0.0] * 6, "y": [0.0, 1.0, 0.0], "z": [0.0]}
    # x: Fisher p = 1/924; y: far from significant; z never passed, so it cannot regress.
    assert case_regressions(parent, candidate, 0.05) == ["x"]
    assert case_regressions({"y": [1.0, 1.0, 1.0]}, {"y": [0.0, 0.0, 0.0]}, 0.01) == []


def test_mean_difference_and_interval():
    effect, low, high = mean_difference(
        {"a": [0.0, 0.0, 1.0, 1.0], "b": [1.0]}, {"a": [1.0, 1.0], "b": [1.0]}
    )
    assert effect == pytest.approx(0.25)  # (0.5 + 0) / 2
    spread = sum((v - 2 / 3) ** 2 for v in [0, 0, 1, 1, 1, 1]) / 5 * (1 / 2 + 1 / 4)
    half = stats.norm.isf(0.025) * math.sqrt(spread) / 2
    assert (low, high) == pytest.approx((0.25 - half, 0.25 + half))
