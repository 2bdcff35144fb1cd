def priority(value: float, weight: float) -> float:
    """Dantzig's greedy: the most value per unit of weight first."""
    return value / weight
