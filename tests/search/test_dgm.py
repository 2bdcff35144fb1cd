import pytest

from assay.search import Archive, DGMSelector, Node
from assay.search.dgm import sigmoid


def test_matches_hand_computed_probabilities() -> None:
    # s(a) = sigmoid(4) = 0.9820138, h 1; s(b) = 0.5, h 1/2; c inherits 0.9 -> s 0.9820138, h 1/4
    archive = Archive(
        [Node("a", None, 0.9), Node("b", "a", 0.5, children=1), Node("c", "a", None, children=3)]
    )
    probs = DGMSelector().probabilities(archive)
    assert probs["a"] == pytest.approx(0.6646378, abs=1e-7)
    assert probs["b"] == pytest.approx(0.1692028, abs=1e-7)
    assert probs["c"] == pytest.approx(0.1661594, abs=1e-7)


def test_prefers_unexpanded_good_nodes() -> None:
    archive = Archive([Node("good", None, 0.8), Node("twin", "good", 0.8), Node("bad", "good", 0.2)])
    for _ in range(2):
        archive.record_child("good")
    probs = DGMSelector().probabilities(archive)
    assert probs["twin"] == pytest.approx(3 * probs["good"])
    assert probs["twin"] > probs["good"] > probs["bad"]


def test_sigmoid_is_finite_at_extremes() -> None:
    assert sigmoid(0.0) == 0.5
    assert sigmoid(-1000.0) == 0.0
    assert sigmoid(1000.0) == 1.0
    assert sigmoid(4.0) == pytest.approx(0.98201379)
