"""Online bin packing: the priority of putting an item into a bin. This is the artifact `assay evolve` edits.

Items arrive one at a time; each goes into the open bin with the highest priority among those it fits in
(or a new bin). Fewer bins is better. This starting heuristic mixes first fit with a preference for roomy
bins, which wastes space; better heuristics exist (best fit is one).
"""


def priority(item: float, remaining: float, index: int) -> float:
    """Score for placing ``item`` into a bin with ``remaining`` free capacity (capacity 1.0) at position ``index``."""
    leftover = remaining - item
    score = 0.5 * leftover - 0.01 * index
    if leftover < 0.1:
        score = score - 0.2
    return score
