def priority(item: float, remaining: float) -> float:
    """Best fit: the bin left fullest."""
    return -(remaining - item)
