"""Every registered parent selector passes the parent selector suite
(:func:`assay.testing.search.check_parent_selector`); a strategy registered later joins it by its name."""

from __future__ import annotations

import pytest

from assay.extensions import PARENT_SELECTOR, resolve
from assay.search import SELECTORS, Archive, ParentSelector, SearchError
from assay.search.base import normalise
from assay.testing.search import check_parent_selector

NAMES = SELECTORS.names()


@pytest.mark.parametrize("name", NAMES)
def test_registered_strategy_conforms(name: str) -> None:
    check_parent_selector(lambda: resolve(PARENT_SELECTOR, name))


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
    monkeypatch.setitem(SELECTORS._items, "youngest", Youngest)
    assert "youngest" in SELECTORS.names()
    check_parent_selector(lambda: resolve(PARENT_SELECTOR, "youngest"))


class FirstAlways(Youngest):
    """Says the newest is likeliest but always chooses the first node: its draws betray it."""

    def choose(self, archive: Archive, rng: object) -> str:  # type: ignore[override]
        return archive.nodes()[0].id


def test_the_suite_names_what_a_broken_selector_breaks() -> None:
    with pytest.raises(
        AssertionError, match=r"choose picked a in 1\.000 of 2000 draws, its probability is 0\.167"
    ):
        check_parent_selector(FirstAlways, draws=2000)
