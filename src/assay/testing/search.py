"""The parent selector suite: :func:`check_parent_selector`, which every registered selector passes and a
selector of one's own can run."""

from __future__ import annotations

import random
from collections.abc import Callable

from assay.extensions import PARENT_SELECTOR
from assay.protocols import ParentSelectorProtocol
from assay.search import Archive, Node, SearchError
from assay.testing._expect import close, conformed, expect, refused


def archive() -> Archive:
    """Four candidates: a best root, two evaluated children of it, one not yet evaluated."""
    return Archive(
        [
            Node("a", None, 0.9, bt_rank=1),
            Node("b", "a", 0.7, bt_rank=0, visits=1),
            Node("c", "a", 0.5, visits=3),
            Node("d", "c", None),
        ]
    )


def check_parent_selector(make: Callable[[], object], draws: int = 20_000) -> None:
    """The parent selector contract, on a selector ``make()`` builds: one probability per node, in archive
    order, each at least 0 and summing to 1; ``choose`` returns a node of the archive, never one of
    probability 0, the same one for the same seed, and as often as its probability says (within 0.012 over
    ``draws`` draws); an empty archive is a SearchError that says so.

    Plain function. Raises AssertionError naming the part of the contract that failed."""
    raw = make()
    who = f"parent selector {type(raw).__name__}"
    expect(isinstance(raw, ParentSelectorProtocol), f"{who}: lacks probabilities(archive)")
    selector = conformed(PARENT_SELECTOR, raw, who)
    probs = selector.probabilities(archive())
    expect(
        list(probs) == ["a", "b", "c", "d"],
        f"{who}: probabilities are not one per node in archive order: {probs}",
    )
    expect(
        close(sum(probs.values()), 1.0) and all(p >= 0 for p in probs.values()),
        f"{who}: probabilities are not at least 0 each and summing to 1: {probs}",
    )
    chosen = [selector.choose(archive(), random.Random(seed)) for seed in range(40)]
    again = [selector.choose(archive(), random.Random(seed)) for seed in range(40)]
    expect(chosen == again, f"{who}: choose differs for the same seed: {chosen} vs {again}")
    expect(
        all(node_id in probs and probs[node_id] > 0 for node_id in chosen),
        f"{who}: choose returned a node of probability 0 or not in the archive: {sorted(set(chosen))} ({probs})",
    )
    rng = random.Random(1234)
    counts = dict.fromkeys(probs, 0)
    for _ in range(draws):
        node_id = selector.choose(archive(), rng)
        counts[node_id] = counts.get(node_id, 0) + 1
    for node_id, p in probs.items():
        share = counts[node_id] / draws
        expect(
            close(share, p, abs=0.012),
            f"{who}: choose picked {node_id} in {share:.3f} of {draws} draws, its probability is {p:.3f}",
        )
    refused(
        SearchError,
        "archive is empty",
        lambda: selector.choose(Archive(), random.Random(0)),
        f"{who}: choose on an empty archive must raise SearchError('... archive is empty ...')",
    )
