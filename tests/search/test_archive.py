import pytest

from assay.errors import AssayError
from assay.search import Archive, Node, SearchError


def test_unevaluated_nodes_inherit_through_two_levels() -> None:
    archive = Archive(
        [Node("root", None, 0.4), Node("a", "root", 0.7), Node("b", "a", None), Node("c", "b", None)]
    )
    assert archive.effective_accuracy("c") == 0.7
    assert archive.effective_accuracy("b") == 0.7
    assert archive.effective_accuracy("root") == 0.4


def test_unevaluated_root_counts_as_zero() -> None:
    archive = Archive([Node("root", None, None), Node("a", "root", None)])
    assert archive.effective_accuracy("a") == 0.0


def test_visits_and_children_are_counted() -> None:
    archive = Archive([Node("root", None, 0.5)])
    archive.record_choice("root")
    archive.record_choice("root")
    archive.record_child("root")
    node = archive.get("root")
    assert (node.visits, node.children) == (2, 1)


def test_nodes_keep_insertion_order() -> None:
    archive = Archive()
    for name in ["z", "a", "m"]:
        archive.add(Node(name, None, 0.1))
    assert [n.id for n in archive.nodes()] == ["z", "a", "m"]
    assert len(archive) == 3 and "a" in archive and "q" not in archive


@pytest.mark.parametrize(
    ("node", "message"),
    [
        (Node("root", None, 0.2), "already holds a candidate 'root'"),
        (Node("x", "ghost", 0.2), "unknown parent 'ghost'"),
        (Node("x", "root", 1.5), "expected a value in [0, 1]"),
        (Node("x", "root", 0.5, bt_rank=-1), "expected 0 or more"),
    ],
)
def test_bad_nodes_are_refused_with_one_line(node: Node, message: str) -> None:
    archive = Archive([Node("root", None, 0.5)])
    with pytest.raises(AssayError) as info:
        archive.add(node)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_unknown_id_is_a_clear_error() -> None:
    with pytest.raises(SearchError, match="no candidate 'nope'"):
        Archive().record_choice("nope")
