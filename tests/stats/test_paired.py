import pytest

from assay.stats import case_differences, paired_bootstrap, sign_test, wilcoxon_test


def test_sign_test_known_value_and_zeros_dropped():
    result = sign_test([1, 1, 1, 1, 1, -1, 0, 0])
    assert result.n == 6 and result.statistic == 5
    assert result.p_value == pytest.approx(7 / 64)  # P(X >= 5), X ~ Binomial(6, 1/2)
    assert sign_test([0, 0]).p_value == 1.0
    assert sign_test([-1, -1, -1], alternative="less").p_value == pytest.approx(1 / 8)


def test_wilcoxon_exact_known_value():
    # All five differences positive with distinct ranks: only 1 of 2^5 sign patterns is as extreme.
    assert wilcoxon_test([0.1, 0.2, 0.3, 0.4, 0.5]).p_value == pytest.approx(1 / 32)
    assert wilcoxon_test([0.1, -0.2, 0.3, -0.4, 0.5, 0.0]).n == 5
    assert wilcoxon_test([]).p_value == 1.0


def test_paired_bootstrap_interval_brackets_the_mean_and_is_seeded():
    diffs = [0.0, 0.5, 1.0, 0.0, 0.5, 1.0, 0.25, 0.75]
    mean, low, high = paired_bootstrap(diffs)
    assert mean == pytest.approx(0.5)
    assert 0.2 < low < mean < high < 0.8
    assert paired_bootstrap(diffs) == (mean, low, high)
    assert paired_bootstrap([0.3, 0.3, 0.3]) == (0.3, 0.3, 0.3)


def test_case_differences_are_mean_differences():
    parent = {"a": [1.0, 0.0, 1.0, 0.0], "b": [1.0], "c": []}
    candidate = {"a": [1.0, 1.0], "b": [0.0], "c": [1.0]}
    assert case_differences(parent, candidate) == {"a": 0.5, "b": -1.0}
