"""Rank-based sampling with a visit penalty (SIFT).

P(i) ∝ exp(−α·r_bt(i) − β·r_acc(i) − η·log(1 + visits_i)), where r_acc is the rank by effective accuracy
(0 = best) and r_bt the Bradley–Terry rank, falling back to r_acc for nodes not rated yet.
"""

from __future__ import annotations

import math

from assay.search.archive import Archive, accuracy_ranks
from assay.search.base import SELECTORS, ParentSelector, normalise


@SELECTORS.register("ranked", "sift")
class RankedSelector(ParentSelector):
    """SIFT's parent sampler; ``alpha``, ``beta``, ``eta`` weigh BT rank, accuracy rank and visits."""

    name = "ranked"

    def __init__(self, alpha: float = 1.0, beta: float = 1.0, eta: float = 1.0) -> None:
        self.alpha = alpha
        self.beta = beta
        self.eta = eta

    def logits(self, archive: Archive) -> dict[str, float]:
        """The exponent of each node's unnormalised probability."""
        acc_rank = accuracy_ranks(archive)
        out: dict[str, float] = {}
        for node in archive.nodes():
            r_acc = acc_rank[node.id]
            r_bt = node.bt_rank if node.bt_rank is not None else r_acc
            out[node.id] = -self.alpha * r_bt - self.beta * r_acc - self.eta * math.log1p(node.visits)
        return out

    def probabilities(self, archive: Archive) -> dict[str, float]:
        logits = self.logits(archive)
        # Shifting by the maximum keeps exp() in range however large the ranks grow.
        top = max(logits.values())
        return normalise({node_id: math.exp(z - top) for node_id, z in logits.items()})
