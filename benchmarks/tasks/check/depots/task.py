"""Depot placement: 240 customers in the unit square, in 3 to 6 clusters of different spreads; ``place(customers,
k)`` returns the ``[x, y]`` of k depots (k from 4 to 7). The cost is the customers' mean distance to their
nearest depot; the gap is its excess over the best of five k-means runs (Lloyd from k-means++ seeds), in percent.
Anything but k finite points is refused (ValueError)."""

import math
import random

FILE = "depots.py"
SHAPE = "constructor"
FUNCTION = "place"
TARGET = 3.0
PARAMETERS = {
    "place(margin)": (0.0, 0.45),
    "place(pull)": (0.0, 1.0),
    "place(rounds)": (0, 20),
}


def cost(depots, customers):
    return sum(min(math.dist(c, d) for d in depots) for c in customers) / len(customers)


def _lloyd(depots, customers):
    for _ in range(50):
        groups = [[] for _ in depots]
        for c in customers:
            groups[min(range(len(depots)), key=lambda i: math.dist(c, depots[i]))].append(c)
        moved = [
            [sum(p[0] for p in g) / len(g), sum(p[1] for p in g) / len(g)] if g else d
            for d, g in zip(depots, groups, strict=True)
        ]
        if moved == depots:
            break
        depots = moved
    return depots


def _kmeans_plus_plus(customers, k, rng):
    depots = [list(rng.choice(customers))]
    while len(depots) < k:
        weights = [min(math.dist(c, d) for d in depots) ** 2 for c in customers]
        depots.append(list(rng.choices(customers, weights)[0]))
    return depots


def instance(seed):
    rng = random.Random(seed)
    customers = []
    clusters = [
        [rng.uniform(0.1, 0.9), rng.uniform(0.1, 0.9), rng.uniform(0.03, 0.15)]
        for _ in range(rng.randint(3, 6))
    ]
    while len(customers) < 240:
        x, y, spread = rng.choice(clusters)
        point = [rng.gauss(x, spread), rng.gauss(y, spread)]
        if 0 <= point[0] <= 1 and 0 <= point[1] <= 1:
            customers.append(point)
    k = rng.randint(4, 7)
    best = min(cost(_lloyd(_kmeans_plus_plus(customers, k, rng), customers), customers) for _ in range(5))
    return {"customers": customers, "k": k, "best": best}


def gap(place, instance):
    customers, k = instance["customers"], instance["k"]
    depots = place([list(c) for c in customers], k)
    if len(depots) != k or not all(len(d) == 2 and all(map(math.isfinite, d)) for d in depots):
        raise ValueError(f"expected {k} finite [x, y] depots, got {depots!r:.80}")
    return 100 * (cost(depots, customers) - instance["best"]) / instance["best"]
