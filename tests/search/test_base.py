import random

import pytest

from assay.search import (
    SELECTORS,
    Archive,
    DGMSelector,
    GreedySelector,
    Node,
    RankedSelector,
    SearchError,
    make_selector,
)


def _archive() -> Archive:
    return Archive(
        [
            Node("a", None, 0.9, bt_rank=1),
            Node("b", "a", 0.7, bt_rank=0, visits=1),
            Node("c", "a", 0.5, visits=3),
            Node("d", "c", None),
        ]
    )


def test_registry_knows_every_strategy_by_name() -> None:
    assert SELECTORS.get("greedy") is GreedySelector
    assert SELECTORS.get("ranked") is RankedSelector
    assert SELECTORS.get("sift") is RankedSelector
    assert SELECTORS.get("dgm") is DGMSelector


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(SearchError) as info:
        make_selector("annealing")
    assert str(info.value) == "unknown parent selector 'annealing'; known: dgm, greedy, ranked, sift"


def test_make_selector_accepts_objects_and_names_with_options() -> None:
    mine = DGMSelector()
    assert make_selector(mine) is mine
    built = make_selector("ranked", alpha=2.0)
    assert isinstance(built, RankedSelector) and built.alpha == 2.0


# The contract every registered strategy meets (probabilities, choose, seeds, frequencies, an empty archive)
# is tests/search/test_conformance.py.


@pytest.mark.parametrize("name", ["ranked", "dgm"])
def test_the_samplers_are_not_constant(name: str) -> None:
    selector = make_selector(name)
    assert len({selector.choose(_archive(), random.Random(seed)) for seed in range(40)}) > 1


def test_choose_never_returns_a_zero_probability_node() -> None:
    archive = _archive()
    chosen = {GreedySelector().choose(archive, random.Random(seed)) for seed in range(200)}
    assert chosen == {"a"}
