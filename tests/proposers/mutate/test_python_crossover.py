"""Crossover: a statement of one program's function put in another's, where it stands in the first."""

from __future__ import annotations

import ast
import random

from assay.proposers.mutate.python_crossover import crossover

RECIPIENT = '''"""Bin packing."""


def priority(item: float, bins: list) -> float:
    """Best fit."""
    score = -item
    if item > 50:
        return 2.0
    return score + 1.5
'''
DONOR = '''"""Bin packing."""


def priority(item: float, bins: list) -> float:
    """Best fit, grown."""
    score = -item * 2
    if 0 < item - 30 < 12:
        score += 5  # a bonus
        score *= 2
    if item > 70:
        return 3.0
    return score / (item or 1)
'''


def grafts(recipient: str = RECIPIENT, donor: str = DONOR) -> dict[str, str]:
    """Every distinct crossover over 40 draws, by the line the description names."""
    found = {}
    for seed in range(40):
        made = crossover("p.py", recipient, donor, random.Random(seed))
        if made is not None:
            found[made.description.split("`")[1]] = made.new_text
    return found


def body(text: str) -> list[str]:
    function = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef))
    return [ast.unparse(stmt).splitlines()[0] for stmt in function.body]


def test_each_statement_the_recipient_lacks_is_grafted_where_it_stands_in_the_donor() -> None:
    found = grafts()
    assert set(found) == {
        "score = -item * 2",
        "if 0 < item - 30 < 12:",
        "if item > 70:",
        "return score / (item or 1)",
    }
    # Counterparts are replaced: the assignment to the same name, the if with the same test up to its numbers,
    # the final return.
    assert body(found["score = -item * 2"])[1:] == [
        "score = -item * 2",
        "if item > 50:",
        "return score + 1.5",
    ]
    assert body(found["if item > 70:"])[2:] == ["if item > 70:", "return score + 1.5"]
    assert body(found["return score / (item or 1)"])[-1] == "return score / (item or 1)"
    # A new branch goes in after the counterpart of the statement before it in the donor, with its whole
    # block, its comment and its indentation.
    grafted = found["if 0 < item - 30 < 12:"]
    assert body(grafted)[1:] == [
        "score = -item",
        "if 0 < item - 30 < 12:",
        "if item > 50:",
        "return score + 1.5",
    ]
    assert "        score += 5  # a bonus\n        score *= 2\n" in grafted
    assert '"""Best fit."""' in grafted  # the recipient's docstring stays


def test_nothing_to_graft_between_equal_or_unrelated_programs() -> None:
    assert grafts(RECIPIENT, RECIPIENT) == {}
    assert grafts(RECIPIENT, "def other(x):\n    return x * 2\n") == {}
    assert grafts(RECIPIENT, "def priority(:\n") == {}  # a donor that does not parse


def test_a_donor_statement_after_its_final_return_is_never_put_after_the_recipients() -> None:
    recipient = "def f(a, b):\n    return a\n"
    donor = "def f(a, b):\n    c = a * b\n    return c\n"
    found = grafts(recipient, donor)
    assert body(found["c = a * b"]) == ["c = a * b", "return a"]
    assert body(found["return c"]) == ["return c"]


def test_a_differently_indented_donor_is_reindented() -> None:
    recipient = "def f(a, b):\n    x = a\n    return x\n"
    donor = "def f(a, b):\n  x = a\n  if b > 1:\n    x = b\n  return x\n"
    grafted = grafts(recipient, donor)["if b > 1:"]
    assert grafted == "def f(a, b):\n    x = a\n    if b > 1:\n      x = b\n    return x\n"
    compile(grafted, "f.py", "exec")
