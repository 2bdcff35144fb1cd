"""Classic paired tests on per-case differences (candidate minus parent), thin wrappers over scipy.stats.

They need one number per case on each side. With repeated runs, `case_differences` turns run lists into
per-case mean differences; with unequal run counts those differences are not symmetric under the null, which
is why the gate uses the stratified test in `assay.stats.stratified` (see docs/noise.md). These remain for
equal-run comparisons, reports and checks of the gate's choice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Literal

Alternative = Literal["greater", "less", "two-sided"]


@dataclass(frozen=True)
class PairedTest:
    """A test's statistic, p-value and the number of pairs it used (zero differences excluded)."""

    statistic: float
    p_value: float
    n: int


def case_differences(
    parent: Mapping[str, Sequence[float]], candidate: Mapping[str, Sequence[float]]
) -> dict[str, float]:
    """Mean candidate score minus mean parent score for each case that has runs on both sides."""
    return {
        cid: fmean(candidate[cid]) - fmean(runs)
        for cid, runs in parent.items()
        if runs and candidate.get(cid)
    }


def sign_test(differences: Sequence[float], alternative: Alternative = "greater") -> PairedTest:
    """Exact sign test: how many non-zero differences are positive, against Binomial(n, 1/2)."""
    from scipy import stats

    nonzero = [d for d in differences if d != 0]
    positive = sum(d > 0 for d in nonzero)
    if not nonzero:
        return PairedTest(statistic=0.0, p_value=1.0, n=0)
    result = stats.binomtest(positive, len(nonzero), 0.5, alternative=alternative)
    return PairedTest(statistic=float(positive), p_value=float(result.pvalue), n=len(nonzero))


def wilcoxon_test(differences: Sequence[float], alternative: Alternative = "greater") -> PairedTest:
    """Wilcoxon signed-rank test (zero differences dropped; exact for small n without ties)."""
    from scipy import stats

    nonzero = [d for d in differences if d != 0]
    if not nonzero:
        return PairedTest(statistic=0.0, p_value=1.0, n=0)
    result = stats.wilcoxon(nonzero, alternative=alternative)
    return PairedTest(statistic=float(result.statistic), p_value=float(result.pvalue), n=len(nonzero))


def paired_bootstrap(
    differences: Sequence[float], *, level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """Mean difference with a BCa bootstrap confidence interval at ``level``: (mean, low, high)."""
    import numpy as np
    from scipy import stats

    values = np.asarray(differences, dtype=float)
    if values.size == 0:
        return 0.0, 0.0, 0.0
    mean = float(values.mean())
    if values.size < 2 or np.all(values == values[0]):
        return mean, mean, mean
    result = stats.bootstrap(
        (values,), np.mean, confidence_level=level, n_resamples=resamples, method="BCa", rng=seed
    )
    interval = result.confidence_interval
    return mean, float(interval.low), float(interval.high)
