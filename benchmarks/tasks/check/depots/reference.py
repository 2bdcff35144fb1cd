"""Depot placement: farthest-first seeds from the customers' middle, then ten rounds of Lloyd's moves."""


def place(customers, k):
    middle = [sum(c[0] for c in customers) / len(customers), sum(c[1] for c in customers) / len(customers)]

    def far(point):
        return min((point[0] - d[0]) ** 2 + (point[1] - d[1]) ** 2 for d in depots or [middle])

    depots = []
    while len(depots) < k:
        depots.append(list(max(customers, key=far)))
    for _ in range(10):
        served = [[] for _ in depots]
        for x, y in customers:
            nearest = min(range(k), key=lambda i: (depots[i][0] - x) ** 2 + (depots[i][1] - y) ** 2)
            served[nearest].append((x, y))
        depots = [
            [sum(p[0] for p in g) / len(g), sum(p[1] for p in g) / len(g)] if g else d
            for d, g in zip(depots, served, strict=True)
        ]
    return depots
