import math

A = 2.5
B = 0.35
C = 12.0
D = 0.8
E = 40.0


def curve(x: float) -> float:
    return A * math.exp(-B * x) + C / (1 + D * x) + E / (10 + x)
