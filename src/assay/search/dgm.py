"""Darwin Gödel Machine parent sampling: good candidates with few children are favoured.

s = sigmoid(10·(acc − 0.5)), h = 1 / (1 + children), p ∝ s·h.
"""

from __future__ import annotations

import math

from assay.search.archive import Archive, require_nodes
from assay.search.base import SELECTORS, ParentSelector, normalise


def sigmoid(x: float) -> float:
    """The logistic function, without overflow for large |x|."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@SELECTORS.register("dgm")
class DGMSelector(ParentSelector):
    """DGM's sampler; ``steepness`` and ``midpoint`` shape the sigmoid over effective accuracy."""

    name = "dgm"

    def __init__(self, steepness: float = 10.0, midpoint: float = 0.5) -> None:
        self.steepness = steepness
        self.midpoint = midpoint

    def probabilities(self, archive: Archive) -> dict[str, float]:
        weights: dict[str, float] = {}
        for node in require_nodes(archive):
            s = sigmoid(self.steepness * (archive.effective_accuracy(node.id) - self.midpoint))
            weights[node.id] = s / (1 + node.children)
        return normalise(weights)
