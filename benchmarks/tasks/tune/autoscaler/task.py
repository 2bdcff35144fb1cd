"""An autoscaler's settings, ``autoscaler.json``, read by the scaling script: every minute it sees the last
minute's requests and sets how many replicas it wants; a new replica serves after 2 minutes, each serves 100
requests a minute. Each instance is 6 hours of traffic (a daily swell, a few bursts that ramp up and down, 3% noise). The cost is the
replica-minutes paid plus 0.1 per request dropped; the gap is its excess over an oracle that runs exactly the
replicas each minute needs, in percent."""

import json
import math
import random

FILE = "autoscaler.json"
SHAPE = "config"
TARGET = 25.0
PARAMETERS = {
    "target_utilization": (0.3, 1.2),
    "headroom": (0, 10),
    "smoothing": (0.0, 0.95),
    "scale_up.step": (1, 20),
    "scale_up.cooldown": (0, 15),
    "scale_down.step": (1, 20),
    "scale_down.cooldown": (0, 30),
    "replicas.min": (1, 10),
}
CAPACITY = 100
WARMUP = 2
DROP_COST = 0.1


def load(text):
    return json.loads(text)


def instance(seed):
    rng = random.Random(seed)
    base, swell, phase = rng.uniform(200, 600), rng.uniform(0.2, 0.6), rng.uniform(0, 2 * math.pi)
    demand = [base * (1 + swell * math.sin(phase + 2 * math.pi * t / 360)) for t in range(360)]
    for _ in range(rng.randint(2, 5)):  # a burst ramps up, holds, and ramps down
        start, ramp, length, factor = (
            rng.randrange(360),
            rng.randint(3, 8),
            rng.randint(5, 20),
            rng.uniform(1.5, 3),
        )
        for t in range(start, min(360, start + 2 * ramp + length)):
            rise = min(1.0, (t - start + 1) / ramp, (start + 2 * ramp + length - t) / ramp)
            demand[t] *= 1 + (factor - 1) * rise
    demand = [max(0, round(d * rng.uniform(0.97, 1.03))) for d in demand]
    return {"demand": demand, "oracle": sum(math.ceil(d / CAPACITY) for d in demand)}


def simulate(settings, demand):
    up, down, limits = settings["scale_up"], settings["scale_down"], settings["replicas"]
    ready = wanted = limits["min"]
    starting = []  # minutes at which replicas still warming up become ready
    smoothed, last_change, paid, dropped = float(demand[0]), -1_000, 0, 0
    for t, requests in enumerate(demand):
        ready += sum(1 for at in starting if at == t)
        starting = [at for at in starting if at > t]
        seen = demand[t - 1] if t else demand[0]
        smoothed = settings["smoothing"] * smoothed + (1 - settings["smoothing"]) * seen
        desired = math.ceil(smoothed / (CAPACITY * settings["target_utilization"])) + settings["headroom"]
        desired = max(limits["min"], min(limits["max"], desired))
        if desired > wanted and t - last_change >= up["cooldown"]:
            more = min(desired - wanted, up["step"])
            wanted, last_change = wanted + more, t
            starting += [t + WARMUP] * more
        elif desired < wanted and t - last_change >= down["cooldown"]:
            fewer = min(wanted - desired, down["step"])
            wanted, last_change = wanted - fewer, t
            cancelled = min(fewer, len(starting))
            starting = starting[: len(starting) - cancelled]
            ready -= fewer - cancelled
        paid += ready + len(starting)
        dropped += max(0, requests - ready * CAPACITY)
    return paid + DROP_COST * dropped


def gap(settings, instance):
    return 100 * (simulate(settings, instance["demand"]) - instance["oracle"]) / instance["oracle"]
