"""Greedy 0/1 knapsack: 50 items with integer values and weights uniform on 1-100, a capacity of 40% of their
total weight. Items are taken in decreasing ``priority(value, weight)`` order (ties in item order) whenever they
still fit. The gap is how far the greedy value falls below the optimum (dynamic programming), in percent."""

import random

FILE = "priority.py"
FUNCTION = "priority"
TARGET = 1.5


def instance(seed):
    rng = random.Random(seed)
    items = [[rng.randint(1, 100), rng.randint(1, 100)] for _ in range(50)]
    capacity = int(0.4 * sum(weight for _, weight in items))
    return {"capacity": capacity, "items": items, "optimum": optimum(capacity, items)}


def optimum(capacity, items):
    best = [0] * (capacity + 1)
    for value, weight in items:
        for room in range(capacity, weight - 1, -1):
            if best[room - weight] + value > best[room]:
                best[room] = best[room - weight] + value
    return best[capacity]


def greedy(priority, capacity, items):
    order = sorted(range(len(items)), key=lambda i: -priority(items[i][0], items[i][1]))
    room, total = capacity, 0
    for i in order:
        value, weight = items[i]
        if weight <= room:
            room -= weight
            total += value
    return total


def gap(priority, instance):
    capacity, items = instance["capacity"], instance["items"]
    best = instance["optimum"]
    return 100 * (best - greedy(priority, capacity, items)) / best
