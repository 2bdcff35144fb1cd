"""A tour construction heuristic: 30 cities uniform in the unit square, the tour starts and ends at city 0 and
goes next to the unvisited city with the highest ``priority(distance, to_start)`` (its distance from the
current city, and from city 0; ties in city order). The gap is the tour's excess length over the best tour
2-opt finds from two starts, in percent."""

import math
import random

FILE = "priority.py"
FUNCTION = "priority"
TARGET = 10.0


def _length(tour, cities):
    return sum(math.dist(cities[tour[i - 1]], cities[tour[i]]) for i in range(len(tour)))


def _two_opt(tour, cities):
    tour = list(tour)
    improved = True
    while improved:
        improved = False
        for i in range(1, len(tour) - 1):
            for j in range(i + 1, len(tour)):
                a, b = cities[tour[i - 1]], cities[tour[i]]
                c, d = cities[tour[j]], cities[tour[(j + 1) % len(tour)]]
                if math.dist(a, c) + math.dist(b, d) < math.dist(a, b) + math.dist(c, d) - 1e-12:
                    tour[i : j + 1] = reversed(tour[i : j + 1])
                    improved = True
    return tour


def construct(priority, cities):
    tour, left = [0], list(range(1, len(cities)))
    while left:
        here = cities[tour[-1]]
        best, best_score = left[0], -math.inf
        for city in left:
            score = priority(math.dist(here, cities[city]), math.dist(cities[0], cities[city]))
            if score > best_score:
                best, best_score = city, score
        tour.append(best)
        left.remove(best)
    return tour


def instance(seed):
    rng = random.Random(seed)
    cities = [[rng.random(), rng.random()] for _ in range(30)]
    starts = (list(range(30)), construct(lambda distance, to_start: -distance, cities))
    best = min(_length(_two_opt(start, cities), cities) for start in starts)
    return {"cities": cities, "best": best}


def gap(priority, instance):
    cities = instance["cities"]
    return 100 * (_length(construct(priority, cities), cities) - instance["best"]) / instance["best"]
