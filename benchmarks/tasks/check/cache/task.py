"""A cache's eviction policy, a class: ``Cache(capacity)`` is told of every ``hit(key)`` and every ``miss(key)``
(the key is then stored), and asked for a ``victim()`` to drop when the store is full and a miss comes. Each
instance is 4,000 requests to a cache of 60: a popular set of 300 keys (Zipf-like, drifting slowly) broken by
scans of 30 to 120 keys read once. The gap is the misses over Belady's optimum (drop the key next used furthest ahead), in
percent. A victim that is not stored is refused (ValueError)."""

import random

FILE = "cache.py"
SHAPE = "class"
FUNCTION = "Cache"
TARGET = 20.0
PARAMETERS = {
    "Cache.__init__(recency)": (0.0, 1.0),
    "Cache.__init__(frequency)": (0.0, 500.0),
    "Cache.__init__(decay)": (0.5, 1.0),
    "Cache.__init__(new_uses)": (0.0, 5.0),
}
CAPACITY = 60


def belady(requests, capacity):
    upcoming, after = {}, [0] * len(requests)
    for i in range(len(requests) - 1, -1, -1):
        after[i] = upcoming.get(requests[i], len(requests))
        upcoming[requests[i]] = i
    stored, misses = {}, 0  # key -> its next use
    for i, key in enumerate(requests):
        if key not in stored:
            misses += 1
            if len(stored) >= capacity:
                del stored[max(stored, key=stored.get)]
        stored[key] = after[i]
    return misses


def instance(seed):
    rng = random.Random(seed)
    weights = [1 / (rank + 1) ** 0.9 for rank in range(300)]
    requests, fresh, shift = [], 0, 0
    while len(requests) < 4000:
        if rng.random() < 0.01:
            length = rng.randint(30, 120)
            requests += [f"s{fresh + i}" for i in range(length)]
            fresh += length
        else:
            if rng.random() < 0.002:
                shift += rng.randint(5, 30)
            requests.append(f"k{(rng.choices(range(300), weights)[0] + shift) % 1000}")
    requests = requests[:4000]
    return {"capacity": CAPACITY, "requests": requests, "optimum": belady(requests, CAPACITY)}


def gap(cache, instance):
    policy, stored, misses = cache(instance["capacity"]), set(), 0
    for key in instance["requests"]:
        if key in stored:
            policy.hit(key)
            continue
        misses += 1
        if len(stored) >= instance["capacity"]:
            victim = policy.victim()
            if victim not in stored:
                raise ValueError(f"victim {victim!r} is not in the cache")
            stored.discard(victim)
        stored.add(key)
        policy.miss(key)
    return 100 * (misses - instance["optimum"]) / instance["optimum"]
