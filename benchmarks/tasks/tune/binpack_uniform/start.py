"""Online bin packing: the priority of an open bin for an incoming item (highest wins)."""


def priority(item: float, remaining: float) -> float:
    """Every bin alike: the first bin the item fits (first fit)."""
    return 0.0
