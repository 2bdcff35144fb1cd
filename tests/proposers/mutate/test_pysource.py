"""Splicing AST edits into the original source, verified against the mutated tree, with an unparse fallback."""

from __future__ import annotations

import ast
import random

from assay.proposers.mutate.pysource import PyChange, Source, SourceEdit, apply_python


def test_byte_offsets_handle_non_ascii_text() -> None:
    text = 'name = "héllo"; x = 1 + 2\n'
    src = Source(text, ast.parse(text))
    binop = src.tree.body[1].value  # type: ignore[attr-defined]
    assert src.segment(binop) == "1 + 2"
    assert src.apply([SourceEdit(src.start(binop), src.end(binop), "3")]) == 'name = "héllo"; x = 3\n'


def test_where_names_the_innermost_scope() -> None:
    text = "class A:\n    def f(self):\n        return 1\n\nx = 2\n"
    src = Source(text, ast.parse(text))
    assert (src.where(3), src.where(1), src.where(5)) == ("in f() line 3", "in A() line 1", "line 5")


def test_a_wrong_plan_is_rejected_and_the_file_is_unparsed() -> None:
    def bad_plan(src: Source, rng: random.Random) -> PyChange:
        assign = src.tree.body[0]
        assign.value = ast.Constant(2)  # type: ignore[attr-defined]
        return PyChange("set x to 2", [[SourceEdit(0, 1, "y")]])  # claims an edit that does something else

    mutation = apply_python("test.bad", bad_plan, "m.py", "x = 1  # keep\n", random.Random(0))
    assert (
        mutation is not None and mutation.new_text == "x = 2\n"
    )  # unparse: correct, but the comment is lost
    assert mutation.description == "python: set x to 2"


def test_a_change_that_does_nothing_or_does_not_compile_is_dropped() -> None:
    def no_op(src: Source, rng: random.Random) -> PyChange:
        return PyChange("nothing", [[SourceEdit(0, 0, "")]])

    def break_it(src: Source, rng: random.Random) -> PyChange:
        src.tree.body.insert(0, ast.Return(ast.Constant(1)))
        return PyChange("return at module level", [])

    assert apply_python("test.noop", no_op, "m.py", "x = 1\n", random.Random(0)) is None
    assert apply_python("test.break", break_it, "m.py", "x = 1\n", random.Random(0)) is None


def test_statement_on_its_header_line_falls_back_to_unparse() -> None:
    from assay.proposers.mutate import OPERATORS

    results = {
        OPERATORS.get("py.duplicate_statement")
        .apply("m.py", "# head\nif x: y = 1\n", random.Random(s))
        .new_text
        for s in range(6)
    }  # type: ignore[union-attr]
    assert results == {"if x:\n    y = 1\n    y = 1\n", "# head\nif x: y = 1\nif x: y = 1\n"}
