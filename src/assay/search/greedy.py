"""Greedy: always expand the current best candidate (autoresearch's hill climb)."""

from __future__ import annotations

from assay.search.archive import Archive, require_nodes
from assay.search.base import SELECTORS, ParentSelector


@SELECTORS.register("greedy")
class GreedySelector(ParentSelector):
    """The node with the best effective accuracy gets probability 1; ties go to the most recent."""

    name = "greedy"

    def best(self, archive: Archive) -> str:
        """The id of the best node (the newest among equals)."""
        best_id, best_score = "", float("-inf")
        for node in require_nodes(archive):
            score = archive.effective_accuracy(node.id)
            if score >= best_score:
                best_id, best_score = node.id, score
        return best_id

    def probabilities(self, archive: Archive) -> dict[str, float]:
        best_id = self.best(archive)
        return {node.id: 1.0 if node.id == best_id else 0.0 for node in archive.nodes()}
