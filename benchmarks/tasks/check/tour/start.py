"""Tour construction: the priority of an unvisited city as the next stop (highest goes next)."""


def priority(distance: float, to_start: float) -> float:
    """Every city alike: the cities in their given order."""
    return 0.0
