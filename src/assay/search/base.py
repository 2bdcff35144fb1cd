"""The parent-selection contract: given the archive, how likely each candidate is to be expanded next."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

from assay.errors import AssayError
from assay.registry import Registry, UnknownName

if TYPE_CHECKING:
    from assay.search.archive import Archive


class SearchError(AssayError):
    """A parent selector or the archive it reads was used wrongly (one-line message)."""


class ParentSelector(ABC):
    """Chooses which candidate of the archive to expand next.

    ``probabilities`` is the whole decision (one entry per node, summing to 1); ``choose`` samples from it.
    Choosing does not change the archive: the caller records the choice with ``Archive.record_choice``.
    """

    name: ClassVar[str]

    @abstractmethod
    def probabilities(self, archive: Archive) -> dict[str, float]:
        """The probability of each node (by id, in archive order) being chosen as the next parent."""

    def choose(self, archive: Archive, rng: random.Random) -> str:
        """Sample one parent id; deterministic for a given ``rng`` state."""
        probs = self.probabilities(archive)
        threshold = rng.random() * sum(probs.values())
        cumulative = 0.0
        last = ""
        for node_id, p in probs.items():
            if p <= 0.0:
                continue
            cumulative += p
            last = node_id
            if threshold < cumulative:
                return node_id
        return last  # rounding left the threshold just past the total


SELECTORS: Registry[type[ParentSelector]] = Registry("parent selector")


def make_selector(spec: str | ParentSelector, **options: Any) -> ParentSelector:
    """Resolve a strategy given by object or by registered name (``options`` go to its constructor)."""
    if isinstance(spec, ParentSelector):
        return spec
    try:
        cls = SELECTORS.get(spec)
    except UnknownName as exc:
        raise SearchError(str(exc)) from None
    return cls(**options)


def normalise(weights: dict[str, float]) -> dict[str, float]:
    """Scale non-negative weights to sum to 1."""
    total = sum(weights.values())
    return {node_id: w / total for node_id, w in weights.items()}
