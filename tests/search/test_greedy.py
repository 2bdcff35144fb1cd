import random

from assay.search import Archive, GreedySelector, Node


def test_picks_the_best_effective_accuracy() -> None:
    archive = Archive([Node("a", None, 0.3), Node("b", "a", 0.8), Node("c", "b", 0.6)])
    assert GreedySelector().probabilities(archive) == {"a": 0.0, "b": 1.0, "c": 0.0}
    assert GreedySelector().choose(archive, random.Random(7)) == "b"


def test_ties_go_to_the_most_recent() -> None:
    archive = Archive([Node("a", None, 0.8), Node("b", "a", 0.5), Node("c", "a", 0.8)])
    assert GreedySelector().best(archive) == "c"
    archive.add(Node("d", "b", 0.2))
    assert GreedySelector().best(archive) == "c"


def test_unevaluated_child_of_the_best_ties_it_and_is_newer() -> None:
    archive = Archive([Node("a", None, 0.8), Node("b", "a", None)])
    assert GreedySelector().best(archive) == "b"


def test_visits_do_not_move_greedy() -> None:
    archive = Archive([Node("a", None, 0.2), Node("b", "a", 0.9)])
    for _ in range(5):
        archive.record_choice("b")
    assert GreedySelector().best(archive) == "b"
