"""A scoring curve with interacting constants: ``curve(x)`` must match a hidden response at 20 probe points
drawn uniformly on 0-50. The gap is the mean relative error, in percent."""

import math
import random

FILE = "curve.py"
FUNCTION = "curve"
TARGET = 2.0
PARAMETERS = {"A": (0.0, 10.0), "B": (0.0, 2.0), "C": (0.0, 20.0), "D": (0.0, 1.0), "E": (0.0, 200.0)}
_HIDDEN = (2.5, 0.35, 12.0, 0.8, 40.0)


def _response(x):
    a, b, c, d, e = _HIDDEN
    return a * math.exp(-b * x) + c / (1 + d * x) + e / (10 + x)


def instance(seed):
    rng = random.Random(seed)
    points = [rng.uniform(0, 50) for _ in range(20)]
    return {"points": [[x, _response(x)] for x in points]}


def gap(curve, instance):
    errors = [abs(curve(x) - y) / abs(y) for x, y in instance["points"]]
    return 100 * sum(errors) / len(errors)
