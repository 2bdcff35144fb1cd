"""Whether a gain measured on one set of cases falls short of the gain measured on another by more than
chance allows: a two-sample permutation test of per-case gains, the statistics of the overfitting rule
(:mod:`assay.loop.overfitting`).

Each case carries its gains (the candidate's figure minus the baseline's on that case: one column per measure,
such as the pass and the graded score). The cases were split into dev and holdout by a hash of their ids, so
when a change generalizes, its per-case gains are exchangeable between the two splits: any ``n`` of the ``N``
pooled cases are as likely to be the holdout as the ones that are. Conditional on the pooled gains, the
holdout's summed gain is then the sum of a simple random sample of ``n`` of them, and the p-value of a
shortfall is the share of those samples whose sum is no more than the holdout's.

The distribution is enumerated exactly when the pooled cases have at most :data:`EXACT_LIMIT` ways to be split
(4 holdout cases beside 14 dev cases: 3,060), else sampled by :data:`RESAMPLES` random splits drawn with a
fixed seed, whose Monte Carlo p-value (b + 1) / (R + 1) is valid at any R. Either way the same gains give the
same p-values every time they are judged (the splits of one size are drawn once, then reused). The test needs
no model of the gains: discrete pass changes, graded scores with any spread and a holdout of four cases are all
judged at their stated level.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

EXACT_LIMIT = 20_000  # splits enumerated exactly; more are sampled
RESAMPLES = 2_000  # random splits when the exact count is larger
SEED = 0  # the sampled splits' seed: a verdict does not change when it is judged again
TOLERANCE = 1e-9  # sums of the same gains added in another order are equal


def shortfall_p_values(
    dev: ArrayLike, holdout: ArrayLike, *, resamples: int = RESAMPLES, seed: int = SEED
) -> NDArray[np.float64]:
    """One-sided p-values of "the holdout's gains are lower than the dev's", one per measure.

    ``dev`` and ``holdout`` hold one row of gains per case (a 1-D array is one measure). Small p-values say
    the holdout's mean gain is below the dev's by more than the split of the cases explains; a holdout that
    gained as much as dev, or more, has p-values near or at 1.

        >>> shortfall_p_values([[1.0], [1.0], [1.0], [1.0], [1.0]], [[0.0], [0.0]]).round(3).tolist()
        [0.048]
    """
    dev_gains, holdout_gains = _rows(dev, "dev"), _rows(holdout, "holdout")
    if dev_gains.shape[1] != holdout_gains.shape[1]:
        raise ValueError("dev and holdout gains have different numbers of measures")
    pooled = np.vstack([dev_gains, holdout_gains])
    cases, chosen = len(pooled), len(holdout_gains)
    observed = holdout_gains.sum(axis=0) + TOLERANCE
    if math.comb(cases, chosen) <= EXACT_LIMIT:
        sums = _every_split(pooled, chosen)
        return np.asarray((sums <= observed).mean(axis=0), dtype=np.float64)
    sums = pooled[_sampled_splits(cases, chosen, resamples, seed)].sum(axis=1)
    return np.asarray(((sums <= observed).sum(axis=0) + 1) / (resamples + 1), dtype=np.float64)


def _rows(gains: ArrayLike, split: str) -> NDArray[np.float64]:
    array = np.asarray(gains, dtype=np.float64)
    array = array.reshape(-1, 1) if array.ndim == 1 else array
    if array.ndim != 2 or len(array) == 0:
        raise ValueError(f"{split} gains need at least one case (one row of measures per case)")
    return array


def _every_split(pooled: NDArray[np.float64], chosen: int) -> NDArray[np.float64]:
    """The holdout's summed gains under every split of ``pooled`` into ``chosen`` holdout cases and the rest
    (the smaller side is enumerated; the other is the total minus it)."""
    cases = len(pooled)
    smaller = min(chosen, cases - chosen)
    sums = pooled[_subsets(cases, smaller)].sum(axis=1)
    return np.asarray(sums if smaller == chosen else pooled.sum(axis=0) - sums, dtype=np.float64)


@lru_cache(maxsize=8)
def _sampled_splits(cases: int, chosen: int, resamples: int, seed: int) -> NDArray[np.intp]:
    """``resamples`` random ``chosen``-subsets of ``range(cases)``, one per row: the ``chosen`` smallest of
    uniform keys. The seed is fixed, so they are drawn once per split size and reused."""
    keys = np.random.default_rng(seed).random((resamples, cases))
    sample = np.argpartition(keys, chosen - 1, axis=1)[:, :chosen]
    sample.setflags(write=False)
    return sample


@lru_cache(maxsize=8)
def _subsets(cases: int, size: int) -> NDArray[np.intp]:
    """Every ``size``-subset of ``range(cases)``, one per row."""
    flat = itertools.chain.from_iterable(itertools.combinations(range(cases), size))
    subsets = np.fromiter(flat, dtype=np.intp).reshape(-1, size)
    subsets.setflags(write=False)
    return subsets
