"""A scoring curve: a fast-decaying part, a slow-decaying part and a tail."""

import math

A = 1.0
B = 1.0
C = 5.0
D = 0.1
E = 100.0


def curve(x: float) -> float:
    return A * math.exp(-B * x) + C / (1 + D * x) + E / (10 + x)
