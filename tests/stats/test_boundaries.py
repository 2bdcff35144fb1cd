import pytest
from scipy import stats

from assay.stats import efficacy_bounds, spent_alpha


def test_single_look_is_the_fixed_sample_critical_value():
    assert efficacy_bounds(0.05, [1.0]) == pytest.approx([stats.norm.isf(0.05)], abs=1e-6)


@pytest.mark.parametrize(
    ("spending", "fractions", "expected"),
    [
        # Lan-DeMets one-sided alpha 0.025, the values tabulated by gsDesign / EAST.
        ("obrien_fleming", [0.5, 1.0], [2.963, 1.969]),
        ("obrien_fleming", [1 / 3, 2 / 3, 1.0], [3.710, 2.511, 1.993]),
        ("pocock", [0.5, 1.0], [2.157, 2.201]),
    ],
)
def test_known_group_sequential_boundaries(spending, fractions, expected):
    assert efficacy_bounds(0.025, fractions, spending) == pytest.approx(expected, abs=2e-3)


def test_spending_is_monotone_and_reaches_alpha():
    values = [spent_alpha(0.05, t) for t in (0.2, 0.5, 0.8, 1.0)]
    assert values == sorted(values) and values[-1] == pytest.approx(0.05)
    assert spent_alpha(0.05, 1.0, "pocock") == pytest.approx(0.05)
    assert spent_alpha(0.05, 0.25) < spent_alpha(0.05, 0.25, "pocock")  # O'Brien-Fleming spends late


def test_bad_fractions_and_spending_fail_clearly():
    with pytest.raises(ValueError, match="strictly increasing"):
        efficacy_bounds(0.05, [0.5, 0.5])
    with pytest.raises(ValueError, match="known: obrien_fleming, pocock"):
        spent_alpha(0.05, 0.5, "linear")  # type: ignore[arg-type]
