import math

import pytest

from assay.search import Archive, Node, RankedSelector


def _three() -> Archive:
    # r_acc: a 0, b 1, c 2.  r_bt: a 1, b 0, c unknown -> 2.
    return Archive(
        [
            Node("a", None, 0.9, bt_rank=1),
            Node("b", "a", 0.7, bt_rank=0, visits=1),
            Node("c", "a", 0.5, visits=3),
        ]
    )


def test_matches_hand_computed_probabilities() -> None:
    # weights: a e^-1, b e^(-1-ln 2) = e^-1/2, c e^(-4-ln 4) = e^-4/4
    probs = RankedSelector().probabilities(_three())
    assert probs["a"] == pytest.approx(0.6611803, abs=1e-7)
    assert probs["b"] == pytest.approx(0.3305901, abs=1e-7)
    assert probs["c"] == pytest.approx(0.0082296, abs=1e-7)


def test_logits_follow_the_formula() -> None:
    logits = RankedSelector(alpha=2.0, beta=0.5, eta=3.0).logits(_three())
    assert logits["a"] == pytest.approx(-2.0)
    assert logits["b"] == pytest.approx(-0.5 - 3 * math.log(2))
    assert logits["c"] == pytest.approx(-4.0 - 1.0 - 3 * math.log(4))


def test_equal_accuracies_share_a_rank() -> None:
    archive = Archive([Node("a", None, 0.6), Node("b", "a", 0.6), Node("c", "a", 0.1)])
    probs = RankedSelector().probabilities(archive)
    assert probs["a"] == pytest.approx(probs["b"])
    # c: rank 2 on both counts -> e^-4 relative to e^0
    assert probs["c"] / probs["a"] == pytest.approx(math.exp(-4))


def test_visits_lower_a_nodes_probability() -> None:
    archive = _three()
    before = RankedSelector().probabilities(archive)["a"]
    archive.record_choice("a")
    after = RankedSelector().probabilities(archive)["a"]
    assert after < before
    # one visit multiplies a's weight by 1/2
    assert after / (1 - after) == pytest.approx(before / (1 - before) / 2)


def test_stable_for_large_archives_and_weights() -> None:
    nodes = [Node("n0", None, 0.0)] + [Node(f"n{i}", f"n{i - 1}", i / 3000) for i in range(1, 3000)]
    probs = RankedSelector(alpha=50.0, beta=50.0).probabilities(Archive(nodes))
    assert sum(probs.values()) == pytest.approx(1.0)
    assert probs["n2999"] == pytest.approx(1.0)
    assert all(math.isfinite(p) for p in probs.values())
