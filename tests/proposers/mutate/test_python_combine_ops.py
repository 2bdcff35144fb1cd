"""``py.combine``: two of a function's own names combined with each other, on functions of several shapes."""

from __future__ import annotations

import ast
import random

import pytest

from assay.proposers.mutate import OPERATORS, operators_for
from assay.proposers.mutate.python_combine_ops import FORMS, combined

COMBINE = OPERATORS.get("py.combine")
FUNCTIONS = {
    "one_name": "def priority(value: float, weight: float) -> float:\n    return value\n",
    "constant": 'def priority(item, remaining):\n    """Doc."""\n    return 0.0\n',
    "locals": "def score(a, b):\n    total = a + b  # kept\n    return max(total, 3) - b * 2\n",
    "method": "class Rank:\n    def weight(self, a, b):\n        return a / 2\n",
}


def evaluate(source: str, name: str, *args: float) -> float:
    namespace: dict[str, object] = {}
    exec(compile(source, "f.py", "exec"), namespace)
    function = namespace[name]
    assert callable(function)
    return float(function(*args))


@pytest.mark.parametrize("shape", sorted(FUNCTIONS))
def test_a_combination_reads_two_of_the_functions_own_names_and_adds_no_constant_but_one(shape: str) -> None:
    source = FUNCTIONS[shape]
    tree = ast.parse(source)
    before = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)
    }
    results = set()
    for seed in range(16):
        mutation = COMBINE.apply("f.py", source, random.Random(seed))
        assert mutation is not None, (shape, seed)
        assert mutation.operator == "py.combine" and mutation.description.startswith("python: combined `")
        tree = ast.parse(mutation.new_text)
        added = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - before
        assert (
            added <= {"min", "max"} and "self" not in mutation.new_text.splitlines()[-1]
        )  # names the function has, and the two builtins
        constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
        assert set(constants) - {
            n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant)
        } <= {1}
        results.add(mutation.new_text)
    assert len(results) >= 4  # the forms and the names vary with the draw
    if shape == "locals":
        assert all("# kept" in text for text in results)  # spliced into the source, comments stay


def test_the_ratio_a_greedy_needs_is_among_the_draws_and_a_zero_divisor_does_not_crash() -> None:
    texts = {COMBINE.apply("f.py", FUNCTIONS["one_name"], random.Random(seed)).new_text for seed in range(40)}  # type: ignore[union-attr]
    ratio = "def priority(value: float, weight: float) -> float:\n    return value / (weight or 1)\n"
    assert ratio in texts
    assert evaluate(ratio, "priority", 6, 3) == 2.0
    assert evaluate(ratio, "priority", 6, 0) == 6.0


def test_a_sum_or_difference_with_a_name_the_value_already_reads_is_never_drawn() -> None:
    source = "def f(a, b):\n    return a + 2 * b\n"
    for seed in range(60):
        mutation = COMBINE.apply("f.py", source, random.Random(seed))
        assert mutation is not None
        body = mutation.new_text.splitlines()[-1]
        assert body not in (
            "    return a + b + 2 * b",
            "    return a - b + 2 * b",
            "    return b - a + 2 * b",
        )


@pytest.mark.parametrize("form", FORMS)
def test_each_form_computes_what_it_says(form: str) -> None:
    expected = {
        "x / y": 8 / 2, "y / x": 2 / 8, "x * y": 16, "x - y": 6, "y - x": -6, "x + y": 10, "min": 2, "max": 8,
    }[form]  # fmt: skip
    assert (
        eval(
            compile(ast.Expression(ast.fix_missing_locations(combined("x", "y", form))), "f", "eval"),
            {"x": 8, "y": 2},
        )
        == expected
    )


def test_a_function_with_fewer_than_two_names_has_nothing_to_combine() -> None:
    assert COMBINE.apply("f.py", "def f(a):\n    return a * 2\n", random.Random(0)) is None
    assert COMBINE.apply("f.py", "X = 1\n", random.Random(0)) is None


def test_combine_is_a_core_operator_for_python() -> None:
    assert COMBINE in operators_for("python", 2)


def test_functions_and_names_bound_in_a_lambda_are_never_combined_and_a_comprehension_only_inside() -> None:
    called = "def f(a, b):\n    g = lambda a: a * 2\n    return g(b)\n"
    comprehension = "def f(a, b):\n    return [a for a in range(3)]\n"
    for seed in range(30):
        mutation = COMBINE.apply("f.py", called, random.Random(seed))
        assert mutation is not None
        last = mutation.new_text.splitlines()[-1]
        assert last.startswith("    return g(") and "g /" not in last and "(g" not in last, last
        assert "lambda a: a * 2" in mutation.new_text  # the lambda's own `a` untouched
        # a returned comprehension's element is combined inside it, with its loop variable as one of the names
        inside = COMBINE.apply("f.py", comprehension, random.Random(seed))
        assert inside is not None and inside.new_text.endswith(" for a in range(3)]\n"), inside
        assert (
            inside.new_text.splitlines()[-1].startswith("    return [")
            and "b" in inside.new_text.splitlines()[-1]
        )


def test_a_lookup_is_never_combined_or_wrapped() -> None:
    """``hotel[key / (scale or 1)]`` looks up another key, ``(hotel / (scale or 1))[key]`` divides a table."""
    source = "def score(key, hotel, scale):\n    return WEIGHTS[key] * hotel[key] + scale\n"
    for seed in range(30):
        mutation = COMBINE.apply("f.py", source, random.Random(seed))
        assert mutation is not None
        assert "WEIGHTS[key]" in mutation.new_text and "hotel[key]" in mutation.new_text, mutation.new_text
        wrapped = OPERATORS.get("py.wrap").apply("f.py", source, random.Random(seed))
        assert wrapped is not None and "hotel[key]" in wrapped.new_text, wrapped.new_text
