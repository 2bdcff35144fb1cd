"""Group-sequential efficacy boundaries from a Lan-DeMets alpha-spending function.

At look k (information fraction t_k) the test rejects when z >= c_k; the c_k are chosen so that the chance,
under the null, of crossing at any look up to k equals the alpha spent by t_k. Successive z statistics of a
sum with independent increments have correlation sqrt(t_j / t_k), which fixes their joint normal law.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

Spending = Literal["obrien_fleming", "pocock"]


def spent_alpha(alpha: float, fraction: float, spending: Spending = "obrien_fleming") -> float:
    """One-sided alpha spent by information fraction ``fraction`` (Lan-DeMets forms of the two designs)."""
    from scipy import stats  # scipy takes seconds to import: only when a gate really tests

    t = min(1.0, max(fraction, 1e-9))
    if spending == "obrien_fleming":
        return float(2 * stats.norm.sf(stats.norm.isf(alpha / 2) / math.sqrt(t)))
    if spending == "pocock":
        return alpha * math.log(1 + (math.e - 1) * t)
    raise ValueError(f"unknown alpha spending {spending!r}; known: obrien_fleming, pocock")


@lru_cache(maxsize=64)
def _bounds(alpha: float, fractions: tuple[float, ...], spending: Spending) -> tuple[float, ...]:
    import numpy as np
    from scipy import optimize, stats

    bounds: list[float] = []
    for k, t in enumerate(fractions):
        target = spent_alpha(alpha, t, spending)
        if k == 0:
            bounds.append(float(stats.norm.isf(target)))
            continue
        ts = np.asarray(fractions[: k + 1])
        cov = np.sqrt(np.minimum.outer(ts, ts) / np.maximum.outer(ts, ts))
        law = stats.multivariate_normal(mean=np.zeros(k + 1), cov=cov, seed=0)

        def crossed(c: float, law: Any = law, target: float = target) -> float:
            return 1 - float(law.cdf(np.array([*bounds, c]))) - target

        bounds.append(float(optimize.brentq(crossed, 0.0, 8.0, xtol=1e-4)))
    return tuple(bounds)


def efficacy_bounds(
    alpha: float, fractions: Sequence[float], spending: Spending = "obrien_fleming"
) -> list[float]:
    """z boundaries c_1..c_K for looks at the increasing information ``fractions`` (the last one 1)."""
    if not fractions or any(b <= a for a, b in itertools.pairwise(fractions)):
        raise ValueError("information fractions must be non-empty and strictly increasing")
    return list(_bounds(alpha, tuple(float(t) / fractions[-1] for t in fractions), spending))
