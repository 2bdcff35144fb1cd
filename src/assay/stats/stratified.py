"""The gate's test: a paired comparison stratified by case (an exact conditional / permutation test).

A stratum holds runs of one case on both sides (the sequential procedure uses one stratum per case and batch
of runs, see docs/noise.md). Under "no change" the runs of a stratum are exchangeable between the two sides,
so conditional on each stratum's pooled runs the candidate's total is a sum of independent draws without
replacement, one per stratum. For pass/fail runs that is a sum of hypergeometric
variables (the exact Mantel-Haenszel test for a common odds ratio of 1); its exact distribution is the
convolution of their pmfs. For scores in [0, 1] the same permutation statistic is judged by its normal
approximation. A case whose runs all agree carries no variance and so no weight: deterministic cases cannot
fake a change.
One-sided per-case regressions use Fisher's exact test (the same hypergeometric tail) with Holm's correction.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist, fmean

import numpy as np

Stratum = tuple[Sequence[float], Sequence[float]]  # (parent runs, candidate runs) judged together


@dataclass(frozen=True)
class StratifiedTest:
    """z statistic and one-sided p-values for "candidate better" / "candidate worse"; ``exact`` when every
    informative stratum was pass/fail (exact conditional p-values), else normal approximation."""

    z: float
    p_better: float
    p_worse: float
    exact: bool


def _binary(values: Sequence[float]) -> bool:
    return all(v in (0.0, 1.0) for v in values)


def _hypergeom_pmf(total: int, passes: int, n: int) -> tuple[int, list[float]]:
    """Lowest support value and pmf of the passes among n of total runs drawn without replacement."""
    # math.comb on small integers: exact and ~100x faster than scipy's pmf for one small stratum.
    lo, hi = max(0, n - (total - passes)), min(n, passes)
    whole = math.comb(total, n)
    return lo, [math.comb(passes, k) * math.comb(total - passes, n - k) / whole for k in range(lo, hi + 1)]


def _exact_p(strata: list[tuple[int, int, int, int]], mid_p: bool) -> tuple[float, float]:
    """P(S >= s) and P(S <= s) for S = sum of hypergeometric counts; strata are (N, passes, n, observed).
    With ``mid_p`` only half of P(S = s) is counted in each tail."""
    pmf = np.ones(1)
    low = observed = 0
    for total, passes, n, seen in strata:
        lo, probabilities = _hypergeom_pmf(total, passes, n)
        pmf = np.convolve(pmf, probabilities)
        low += lo
        observed += seen
    index = observed - low
    half = pmf[index] / 2 if mid_p else 0.0
    return float(min(1.0, pmf[index:].sum() - half)), float(min(1.0, pmf[: index + 1].sum() - half))


def stratified_test(strata: Iterable[Stratum], *, mid_p: bool = False) -> StratifiedTest:
    """Compare candidate with parent over strata of runs (one per case, or per case and batch of runs)."""
    excess = variance = 0.0
    exact_strata: list[tuple[int, int, int, int]] = []
    exact = True
    for old, new in strata:
        m, n = len(old), len(new)
        total = m + n
        if not m or not n:
            continue
        mean = (sum(old) + sum(new)) / total
        spread = sum((v - mean) ** 2 for v in old) + sum((v - mean) ** 2 for v in new)
        if spread == 0:
            continue
        # Candidate total drawn without replacement: mean n*x̄, variance n*m*spread / (N*(N-1)).
        excess += sum(new) - n * mean
        variance += n * m * spread / (total * (total - 1))
        if exact and _binary(old) and _binary(new):
            exact_strata.append((total, round(mean * total), n, round(sum(new))))
        else:
            exact = False
    if variance == 0:
        return StratifiedTest(0.0, 1.0, 1.0, exact)
    z = excess / math.sqrt(variance)
    if exact:
        p_better, p_worse = _exact_p(exact_strata, mid_p)
    else:
        p_worse = NormalDist().cdf(z)
        p_better = 1 - p_worse
    return StratifiedTest(z, p_better, p_worse, exact)


def mean_difference(
    parent: Mapping[str, Sequence[float]], candidate: Mapping[str, Sequence[float]], *, level: float = 0.95
) -> tuple[float, float, float]:
    """Mean over cases of (candidate mean - parent mean), with a normal two-sided interval at ``level`` from
    each case's pooled run variance: (effect, low, high)."""
    effects: list[float] = []
    variance = 0.0
    for cid, old in parent.items():
        new = candidate.get(cid)
        if not old or not new:
            continue
        effects.append(fmean(new) - fmean(old))
        pooled = [*old, *new]
        if len(pooled) > 1:
            mean = fmean(pooled)
            spread = sum((v - mean) ** 2 for v in pooled) / (len(pooled) - 1)
            variance += spread * (1 / len(new) + 1 / len(old))
    if not effects:
        return 0.0, 0.0, 0.0
    effect = fmean(effects)
    half = NormalDist().inv_cdf(0.5 + level / 2) * math.sqrt(variance) / len(effects)
    return effect, effect - half, effect + half


def holm(p_values: Mapping[str, float], alpha: float) -> list[str]:
    """Names whose hypotheses Holm's step-down procedure rejects at family-wise level ``alpha``."""
    ordered = sorted(p_values.items(), key=lambda item: (item[1], item[0]))
    rejected: list[str] = []
    for rank, (name, p) in enumerate(ordered):
        if p > alpha / (len(ordered) - rank):
            break
        rejected.append(name)
    return sorted(rejected)


def case_regressions(
    parent: Mapping[str, Sequence[float]], candidate: Mapping[str, Sequence[float]], alpha: float
) -> list[str]:
    """Cases significantly worse on their own: one-sided Fisher exact test per case (runs scored >= 0.5
    count as passes), Holm-corrected over the cases the parent passed at least once."""
    p_values: dict[str, float] = {}
    for cid, old in parent.items():
        new = candidate.get(cid)
        old_passes = sum(v >= 0.5 for v in old)
        if not old or not new or old_passes == 0:
            continue
        new_passes = sum(v >= 0.5 for v in new)
        # One-sided Fisher exact test = upper tail of the parent's passes given both margins.
        lo, pmf = _hypergeom_pmf(len(old) + len(new), old_passes + new_passes, len(old))
        p_values[cid] = min(1.0, sum(pmf[old_passes - lo :]))
    return holm(p_values, alpha)
