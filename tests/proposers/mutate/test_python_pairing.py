"""Pairing: every form of a function's unread parameter with what it reads, and every other form of a pair it
already makes, each a program that runs and computes that form."""

from __future__ import annotations

import ast

import pytest

from assay.proposers.mutate.pysource import Source
from assay.proposers.mutate.python_combine_ops import FORMS
from assay.proposers.mutate.python_pairing import pairing, pairings, unread_parameters

RATIO = 'def priority(value: float, weight: float) -> float:\n    """The most valuable first."""\n    return value\n'
# What each form gives for x = 6, y = 3 (x the read name, y the unread one).
EXPECTED = sorted([6 / 3, 3 / 6, 18, 3, -3, 9, 3, 6])


def run(source: str, *args: float) -> float:
    namespace: dict[str, object] = {}
    exec(compile(source, "f.py", "exec"), namespace)
    function = namespace["priority"]
    assert callable(function)
    return float(function(*args))


def all_pairings(text: str, *, reform: bool, order: str = "seed") -> list[str]:
    found = []
    for index in range(30):
        made, count = pairing("p.py", text, index, order, reform=reform)
        if made is None:
            assert index == count
            break
        found.append(made.new_text)
    return found


def test_an_unread_parameter_is_paired_with_the_read_name_in_every_form() -> None:
    texts = all_pairings(RATIO, reform=False)
    assert len(texts) == len(FORMS) == len(set(texts))
    assert sorted(run(t, 6, 3) for t in texts) == EXPECTED
    assert all('"""The most valuable first."""' in t for t in texts)  # spliced in, not rewritten
    made, _ = pairing("p.py", RATIO, 0, "seed", reform=False)
    assert made is not None and made.description.startswith("python: paired `value` with `weight` as ")
    # The order is the seed's: another seed tries the same forms in another order.
    other = all_pairings(RATIO, reform=False, order="another")
    assert sorted(other) == sorted(texts) and other != texts


@pytest.mark.parametrize(
    ("source", "count"),
    [
        ("def priority(a, b):\n    return a + b\n", 0),  # reads every parameter
        ("def priority(a, b):\n    return 0.0\n", 8),  # reads none: the whole value becomes a pair
        ("def priority(a, b, c):\n    return a\n", 24),  # two unread: each and their total, with the read one
        ("class R:\n    def priority(self, a, b):\n        return a\n", 8),  # self is no input
        ("def priority(a, b):\n    if b > 1:\n        return a\n    return a\n", 0),  # b is read by the test
    ],
)
def test_pairings_are_those_of_unread_parameters(source: str, count: int) -> None:
    assert len(pairings(Source(source, ast.parse(source)), reform=False)) == count
    texts = all_pairings(source, reform=False)
    assert len(texts) == len(set(texts)) == count  # each a different program
    assert source not in texts


def test_several_unread_parameters_are_also_paired_by_their_total() -> None:
    source = "def priority(value, w1, w2):\n    return value\n"
    texts = [t for t in all_pairings(source, reform=False) if "w1 + w2" in t]
    assert len(texts) == len(FORMS) == len(set(texts))
    # x = 6 with w1 + w2 = 2 + 1 = 3: every form of 6 and 3, the total computed as one operand.
    assert sorted(run(t, 6, 2, 1) for t in texts) == EXPECTED
    assert any("value / (w1 + w2 or 1)" in t for t in texts)
    assert any("value - (w1 + w2)" in t for t in texts)


def test_a_pair_with_a_total_is_reformed_and_so_is_the_total() -> None:
    source = "def priority(value, w1, w2):\n    return value / (w1 + w2 or 1)\n"
    texts = all_pairings(source, reform=True)
    returned = {ast.unparse(ast.parse(t).body[0].body[0]) for t in texts}  # type: ignore[attr-defined]
    assert "return value - (w1 + w2)" in returned and "return (w1 + w2) / (value or 1)" in returned
    assert "return value / (w1 * w2 or 1)" in returned  # the total's own pair, in another form
    assert len(texts) == len(returned) == 2 * (len(FORMS) - 1)
    for value in ("value + w1 + w2", "(value + w1) * (w1 + w2)"):  # a sum of three; a total times a total
        text = f"def f(value, w1, w2):\n    return {value}\n"
        reformed = pairings(Source(text, ast.parse(text)), reform=True)
        assert reformed  # the pairs of two bare names inside
        assert all(" + " not in p.x or " + " not in p.y for p in reformed)  # never a total with a total
        assert all(not set(p.x.split(" + ")) & set(p.y.split(" + ")) for p in reformed)  # nor a name twice


def test_after_a_kept_pairing_an_input_still_unread_is_paired_too() -> None:
    source = "def priority(value, w1, w2):\n    return value - w1\n"
    texts = all_pairings(source, reform=True)
    returned = {ast.unparse(ast.parse(t).body[0].body[0]) for t in texts}  # type: ignore[attr-defined]
    assert "return value / (w1 or 1)" in returned  # another form of the pair kept
    assert "return value - (w1 + w2)" in returned  # w2, still unread, with a name the value reads
    assert "return value / (w2 or 1) - w1" in returned
    assert len(texts) == len(returned) == len(FORMS) - 1 + 2 * len(FORMS)


def test_unread_parameters_are_those_nothing_reads() -> None:
    function = ast.parse("def f(a, b, *, c, d=1):\n    x = a\n    return [c for _ in x]\n").body[0]
    assert isinstance(function, ast.FunctionDef)
    assert unread_parameters(function) == ["b", "d"]


@pytest.mark.parametrize(
    ("value", "current"),
    [
        ("value - weight", 3),
        ("weight - value", -3),
        ("min(value, weight)", 3),
        ("value / (weight or 1)", 2),
        ("value * weight", 18),
    ],
)
def test_a_pair_is_reformed_in_every_other_form(value: str, current: float) -> None:
    source = f"def priority(value, weight):\n    return ({value}) * 2\n"
    texts = all_pairings(source, reform=True)
    returned = {ast.unparse(ast.parse(t).body[0].body[0]) for t in texts}  # type: ignore[attr-defined]
    assert len(texts) == len(returned) == len(FORMS) - 1
    assert ast.unparse(ast.parse(source).body[0].body[0]) not in returned  # type: ignore[attr-defined]
    others = list(EXPECTED)
    others.remove(
        current
    )  # every form but the one the program has, each still doubled by the `* 2` around it
    assert sorted(run(t, 6, 3) for t in texts) == sorted(2 * v for v in others)
    assert all_pairings(source, reform=False) == []  # both are read: nothing unread to bring in


def test_no_pair_to_reform_without_two_bare_names() -> None:
    for value in ("value - 1", "value - weight * 2", "abs(value - value)"):
        source = f"def priority(value, weight):\n    return {value}\n"
        reformed = pairings(Source(source, ast.parse(source)), reform=True)
        # No form of a pair the value holds: only the input it leaves unread brought in, where there is one.
        assert all(p.y == "weight" for p in reformed)
        assert (reformed == []) == ("weight" in value)
