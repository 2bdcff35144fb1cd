def priority(distance: float, to_start: float) -> float:
    """Nearest neighbour: the closest city next."""
    return -distance
