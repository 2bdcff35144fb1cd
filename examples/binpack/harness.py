"""Packs one generated instance with the artifact's priority function and prints the result as JSON.

Read-only for proposers (listed under `forbid`): the evaluator is out of reach of what it evaluates.
Usage: python harness.py SEED [ITEMS]
"""

import json
import math
import random
import sys

from priority import priority


def instance(seed: int, n: int) -> list[float]:
    """Weibull-like item sizes in (0, 1], as in the OR-library style benchmarks FunSearch used."""
    rng = random.Random(seed)
    return [min(1.0, max(0.01, round(rng.weibullvariate(0.25, 3.0), 3))) for _ in range(n)]


def pack(items: list[float], priority=priority) -> int:  # the artifact's priority, or another to compare
    bins: list[float] = []
    for item in items:
        best, best_score = -1, -math.inf
        for index, remaining in enumerate(bins):
            if remaining >= item - 1e-9:
                score = priority(item, remaining, index)
                if score > best_score:
                    best, best_score = index, score
        if best < 0:
            bins.append(1.0 - item)
        else:
            bins[best] -= item
    return len(bins)


def main() -> None:
    seed = int(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    items = instance(seed, n)
    used = pack(items)
    lower_bound = math.ceil(sum(items) - 1e-9)
    print(json.dumps({"bins": used, "lower_bound": lower_bound}))


if __name__ == "__main__":
    main()
