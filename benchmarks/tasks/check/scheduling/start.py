"""Job scheduling on one machine: the priority of a waiting job (highest runs first)."""


def priority(weight: float, duration: float) -> float:
    """The heaviest job first."""
    return weight
