"""Layer 2 Python operators: one statement moves, disappears or repeats; one if changes its logic."""

from __future__ import annotations

import ast
import random

from assay.proposers.mutate import OPERATORS
from tests.proposers.mutate.samples import dump, statements

BODY = '''def f(x):
    """Docstring stays first."""
    a = x + 1  # first
    b = a * 2
    return b
'''


def apply(name: str, text: str, seed: int = 0):
    return OPERATORS.get(name).apply("mod.py", text, random.Random(seed))


def test_swap_statements_exchanges_two_neighbours_with_their_comments() -> None:
    mutation = apply("py.swap_statements", BODY)
    assert mutation.new_text in {
        BODY.replace("    a = x + 1  # first\n    b = a * 2\n", "    b = a * 2\n    a = x + 1  # first\n"),
        BODY.replace("    b = a * 2\n    return b\n", "    return b\n    b = a * 2\n"),
    }
    assert '"""Docstring stays first."""' in mutation.new_text.splitlines()[1]
    assert statements(mutation.new_text) == statements(BODY)
    assert mutation.description.startswith("python: swapped statements `")


def test_swap_statements_never_moves_a_docstring_or_future_import() -> None:
    text = 'from __future__ import annotations\n"""Not a docstring here."""\nx = 1\n'
    for seed in range(10):
        mutation = apply("py.swap_statements", text, seed)
        assert mutation.new_text.startswith("from __future__ import annotations\n")


def test_delete_statement_removes_one_and_never_the_last_of_a_block() -> None:
    results = {apply("py.delete_statement", BODY, seed).new_text for seed in range(20)}
    assert results == {BODY.replace("    a = x + 1  # first\n", ""), BODY.replace("    b = a * 2\n", "")}
    assert all(statements(text) == statements(BODY) - 1 for text in results)


def test_delete_statement_keeps_blocks_non_empty() -> None:
    assert apply("py.delete_statement", "if x:\n    y = 1\nelse:\n    y = 2\n") is None


def test_duplicate_statement_repeats_one_in_place() -> None:
    text = "total = 0\nfor v in values:\n    total += v\nprint(total)\n"
    results = {apply("py.duplicate_statement", text, seed).new_text for seed in range(30)}
    assert "total = 0\nfor v in values:\n    total += v\n    total += v\nprint(total)\n" in results
    assert all(statements(result) > statements(text) for result in results)


def test_duplicate_statement_skips_definitions_imports_and_returns() -> None:
    assert apply("py.duplicate_statement", "import os\n\ndef f():\n    return 1\n") is None


def test_negate_if_toggles_not_and_keeps_precedence() -> None:
    assert apply("py.negate_if", "if a or b:\n    go()\n").new_text == "if not (a or b):\n    go()\n"
    assert apply("py.negate_if", "if not ready:\n    go()\n").new_text == "if ready:\n    go()\n"


def test_swap_branches_exchanges_if_and_else_bodies() -> None:
    text = "if ok:\n    a()  # yes\nelse:\n    b()\n    c()\n"
    mutation = apply("py.swap_branches", text)
    assert mutation.new_text == "if ok:\n    b()\n    c()\nelse:\n    a()  # yes\n"


def test_swap_branches_leaves_elif_chains_and_lone_ifs_alone() -> None:
    assert apply("py.swap_branches", "if a:\n    x()\nelif b:\n    y()\n") is None
    assert apply("py.swap_branches", "if a:\n    x()\n") is None


def test_layer_two_changes_the_statement_structure(binpack: str) -> None:
    for name in ("py.swap_statements", "py.delete_statement", "py.duplicate_statement"):
        for seed in range(10):
            mutation = apply(name, binpack, seed)
            compile(mutation.new_text, "priority.py", "exec")
            assert dump(mutation.new_text) != dump(binpack)
            tree = ast.parse(mutation.new_text)
            assert [type(n).__name__ for n in tree.body][:2] == ["Expr", "Import"]  # docstring, import stay
    deleted = apply("py.delete_statement", binpack)
    assert statements(deleted.new_text) < statements(binpack)
