def priority(weight: float, duration: float) -> float:
    """Smith's rule (weighted shortest processing time): the most weight per unit of time first."""
    return weight / duration
