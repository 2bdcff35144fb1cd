"""Depot placement: where k depots go so that customers are near one."""

import math


def place(customers, k, margin=0.1, pull=0.0, rounds=1):
    """Depots on an even grid over the map, each then moved ``pull`` of the way to the middle of the customers it
    serves, ``rounds`` times."""
    columns = math.ceil(math.sqrt(k))
    rows = math.ceil(k / columns)
    depots = []
    for row in range(rows):
        for column in range(columns):
            if len(depots) < k:
                x = margin + (1 - 2 * margin) * (column + 0.5) / columns
                y = margin + (1 - 2 * margin) * (row + 0.5) / rows
                depots.append([x, y])
    for _ in range(rounds):
        served = [[] for _ in depots]
        for x, y in customers:
            nearest = min(range(k), key=lambda i: (depots[i][0] - x) ** 2 + (depots[i][1] - y) ** 2)
            served[nearest].append((x, y))
        for depot, group in zip(depots, served, strict=True):
            if group:
                depot[0] += pull * (sum(p[0] for p in group) / len(group) - depot[0])
                depot[1] += pull * (sum(p[1] for p in group) / len(group) - depot[1])
    return depots
