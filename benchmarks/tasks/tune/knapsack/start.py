"""Greedy knapsack: the priority of an item (highest taken first)."""


def priority(value: float, weight: float) -> float:
    """The most valuable item first."""
    return value
