"""One suite every registered parent selection strategy must pass (a strategy registered later joins it by
its name)."""

from __future__ import annotations

import random

import pytest

from assay.extensions import PARENT_SELECTOR, resolve
from assay.protocols import ParentSelectorProtocol
from assay.search import STRATEGIES, Archive, Node, ParentSelector, SearchError
from assay.search.base import normalise

NAMES = STRATEGIES.names()


def archive() -> Archive:
    return Archive(
        [
            Node("a", None, 0.9, bt_rank=1),
            Node("b", "a", 0.7, bt_rank=0, visits=1),
            Node("c", "a", 0.5, visits=3),
            Node("d", "c", None),
        ]
    )


def check_selector(selector: ParentSelector, draws: int = 20_000) -> None:
    """The contract: one probability per node, in archive order, summing to 1; ``choose`` returns a node of
    the archive, never one of probability 0, the same one for the same seed, and as often as its probability
    says; an empty archive is a SearchError."""
    assert isinstance(selector, ParentSelectorProtocol)
    probs = selector.probabilities(archive())
    assert list(probs) == ["a", "b", "c", "d"]
    assert sum(probs.values()) == pytest.approx(1.0) and all(p >= 0 for p in probs.values())
    chosen = [selector.choose(archive(), random.Random(seed)) for seed in range(40)]
    assert chosen == [selector.choose(archive(), random.Random(seed)) for seed in range(40)]
    assert all(probs[node_id] > 0 for node_id in chosen)
    rng = random.Random(1234)
    counts = dict.fromkeys(probs, 0)
    for _ in range(draws):
        counts[selector.choose(archive(), rng)] += 1
    for node_id, p in probs.items():
        assert counts[node_id] / draws == pytest.approx(p, abs=0.012), node_id
    with pytest.raises(SearchError, match="archive is empty"):
        selector.choose(Archive(), random.Random(0))


@pytest.mark.parametrize("name", NAMES)
def test_registered_strategy_conforms(name: str) -> None:
    check_selector(resolve(PARENT_SELECTOR, name))


def test_every_strategy_is_in_the_suite() -> None:
    assert {"greedy", "ranked", "sift", "dgm"} <= set(NAMES)


class Youngest(ParentSelector):
    """A dummy strategy: the newest evaluated candidates are the likeliest."""

    name = "youngest"

    def probabilities(self, archive: Archive) -> dict[str, float]:
        nodes = archive.nodes()
        if not nodes:
            raise SearchError("the archive is empty: nothing to choose from")
        return normalise({n.id: float(i + 1) if n.accuracy is not None else 0.0 for i, n in enumerate(nodes)})


def test_a_registered_dummy_joins_the_suite(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(STRATEGIES._items, "youngest", Youngest)
    assert "youngest" in STRATEGIES.names()
    check_selector(resolve(PARENT_SELECTOR, "youngest"))
