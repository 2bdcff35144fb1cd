"""Every candidate of a run with its lineage, dev score, rating rank and how often it was expanded."""

from __future__ import annotations

from dataclasses import dataclass

from assay.search.base import SearchError


@dataclass
class Node:
    """One candidate in the archive.

    ``accuracy`` is the dev score in [0, 1] (None: not evaluated yet); ``bt_rank`` its rank by
    Bradley–Terry strength (0 = best; None if unknown); ``visits`` how often it was chosen as a parent.
    """

    id: str
    parent: str | None
    accuracy: float | None
    bt_rank: int | None = None
    visits: int = 0
    children: int = 0


class Archive:
    """The candidates in insertion order. A node's parent must be added before the node."""

    def __init__(self, nodes: list[Node] | None = None) -> None:
        self._nodes: dict[str, Node] = {}
        for node in nodes or []:
            self.add(node)

    def add(self, node: Node) -> None:
        """Add a candidate; its id must be new and its parent (if any) already present."""
        if node.id in self._nodes:
            raise SearchError(f"archive already holds a candidate {node.id!r}")
        if node.parent is not None and node.parent not in self._nodes:
            raise SearchError(f"candidate {node.id!r} names an unknown parent {node.parent!r}")
        if node.accuracy is not None and not 0.0 <= node.accuracy <= 1.0:
            raise SearchError(
                f"candidate {node.id!r} has accuracy {node.accuracy}; expected a value in [0, 1]"
            )
        if node.bt_rank is not None and node.bt_rank < 0:
            raise SearchError(f"candidate {node.id!r} has bt_rank {node.bt_rank}; expected 0 or more")
        self._nodes[node.id] = node

    def get(self, id: str) -> Node:
        """The node with this id (SearchError if there is none)."""
        try:
            return self._nodes[id]
        except KeyError:
            raise SearchError(f"archive holds no candidate {id!r}") from None

    def nodes(self) -> list[Node]:
        """All nodes, oldest first."""
        return list(self._nodes.values())

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, id: object) -> bool:
        return id in self._nodes

    def effective_accuracy(self, id: str) -> float:
        """The node's accuracy, or its nearest evaluated ancestor's; 0 when no ancestor was evaluated."""
        node: Node | None = self.get(id)
        while node is not None:
            if node.accuracy is not None:
                return node.accuracy
            node = self._nodes[node.parent] if node.parent is not None else None
        return 0.0

    def record_choice(self, id: str) -> None:
        """Count one more expansion of this node."""
        self.get(id).visits += 1

    def record_child(self, parent_id: str) -> None:
        """Count one more child of this node."""
        self.get(parent_id).children += 1


def require_nodes(archive: Archive) -> list[Node]:
    """The archive's nodes; a clear error when there is nothing to choose from."""
    nodes = archive.nodes()
    if not nodes:
        raise SearchError("cannot choose a parent: the archive is empty")
    return nodes


def accuracy_ranks(archive: Archive) -> dict[str, int]:
    """Rank by effective accuracy, 0 = best; equal accuracies share the better rank (0, 1, 1, 3)."""
    scores = {node.id: archive.effective_accuracy(node.id) for node in require_nodes(archive)}
    ordered = sorted(scores.values(), reverse=True)
    first_index: dict[float, int] = {}
    for index, score in enumerate(ordered):
        first_index.setdefault(score, index)
    return {node_id: first_index[score] for node_id, score in scores.items()}
