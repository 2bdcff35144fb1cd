"""Online bin packing, Weibull items (shape 3, scale 45, rounded, clipped to 1-100; 500 items, bins of
capacity 100), as in FunSearch's Weibull sets. Each item goes to the open bin it fits with the highest
``priority(item, remaining)`` (the first such bin on a tie), or to a new bin when none fits or when an empty
bin's priority ``priority(item, capacity)`` is higher still. The gap is the excess of bins over the L1 bound
``ceil(sum / capacity)``."""

import math
import random

FILE = "priority.py"
FUNCTION = "priority"
TARGET = 5.0
CAPACITY = 100


def instance(seed):
    rng = random.Random(seed)
    items = [min(100, max(1, round(rng.weibullvariate(45, 3)))) for _ in range(500)]
    return {"capacity": CAPACITY, "items": items}


def pack(priority, capacity, items):
    bins = []
    for item in items:
        best, best_score = -1, -math.inf
        for index, remaining in enumerate(bins):
            if remaining >= item:
                score = priority(item, remaining)
                if score > best_score:
                    best, best_score = index, score
        # As in FunSearch, whose bins array holds the unopened bins at full capacity, an empty bin is one of the
        # choices: the priority may open one while others fit.
        if best < 0 or priority(item, capacity) > best_score:
            bins.append(capacity - item)
        else:
            bins[best] -= item
    return len(bins)


def gap(priority, instance):
    capacity, items = instance["capacity"], instance["items"]
    bound = math.ceil(sum(items) / capacity)
    return 100 * (pack(priority, capacity, items) - bound) / bound
