"""The pipeline part of loop state: the proposals made ahead and not yet taken, the last proposal's number, and
the fingerprints of every candidate proposed or measured (a draw that repeats one is drawn again)."""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.loop.events import Committed, Decided, Dropped, Event, Measured, Proposed, Trimmed


@dataclass
class Pipeline:
    """Proposals in flight and the trees seen (see the module docstring)."""

    proposals: dict[int, Proposed] = field(default_factory=dict)
    last_proposal: int = 0
    trees: set[str] = field(default_factory=set)

    def apply(self, event: Event) -> None:
        """Fold ``proposed``, ``committed``, ``decided`` and ``dropped`` (a proposal taken or given up) and the
        trees ``measured``, ``trimmed`` and ``committed`` name."""
        match event:
            case Measured(tree=tree) | Trimmed(measured=Measured(tree=tree)) if tree:
                self.trees.add(tree)
            case Proposed():
                self.proposals[event.number] = event
                self.last_proposal = max(self.last_proposal, event.number)
                if event.proposal.tree:
                    self.trees.add(event.proposal.tree)
            case Committed():
                if event.proposal.tree:
                    self.trees.add(event.proposal.tree)
                if event.proposal.number is not None:
                    self.proposals.pop(event.proposal.number, None)
            case Decided():
                if event.proposal is not None:
                    self.proposals.pop(event.proposal, None)
            case Dropped():
                for number in event.numbers:
                    self.proposals.pop(number, None)
