"""Layer 1 Python operators: one constant or operator changes; statements, comments and layout stay."""

from __future__ import annotations

import ast
import random

import pytest

from assay.proposers.mutate import OPERATORS
from tests.proposers.mutate.samples import statements


def apply(name: str, text: str, seed: int = 0):
    return OPERATORS.get(name).apply("mod.py", text, random.Random(seed))


def changed_lines(old: str, new: str) -> list[tuple[str, str]]:
    pairs = list(zip(old.splitlines(), new.splitlines(), strict=True))
    return [(a, b) for a, b in pairs if a != b]


def test_constant_changes_exactly_one_number_and_keeps_comments() -> None:
    text = "def f(x):\n    # scale it\n    return x * 0.5  # half\n"
    mutation = apply("py.constant", text)
    [(before, after)] = changed_lines(text, mutation.new_text)
    assert before == "    return x * 0.5  # half"
    new_value = ast.parse(mutation.new_text).body[0].body[0].value.right  # type: ignore[attr-defined]
    value = new_value.value if isinstance(new_value, ast.Constant) else -new_value.operand.value
    assert value != 0.5
    assert after == f"    return x * {value!r}  # half"
    assert mutation.operator == "py.constant"
    assert mutation.description == f"python: replaced constant 0.5 with {value!r} in f() line 3"


def test_constant_perturbs_ints_by_one_most_of_the_time() -> None:
    results = {apply("py.constant", "n = 3\n", seed).new_text for seed in range(40)}
    assert {"n = 4\n", "n = 2\n"} <= results
    assert results <= {"n = 4\n", "n = 2\n", "n = -3\n"}


def test_constant_flips_booleans_and_skips_strings() -> None:
    assert apply("py.constant", "flag = True\nname = 'x'\n").new_text == "flag = False\nname = 'x'\n"
    assert apply("py.constant", "name = 'x'\n") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ok = a < b\n", "ok = a <= b\n"),
        ("ok = a >= b\n", "ok = a > b\n"),
        ("ok = a == b\n", "ok = a != b\n"),
        ("ok = a is not None\n", "ok = a is None\n"),
        ("ok = a in b\n", "ok = a not in b\n"),
    ],
)
def test_compare_swaps_the_operator(text: str, expected: str) -> None:
    mutation = apply("py.compare", text)
    assert mutation.new_text == expected
    assert mutation.operator == "py.compare"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("y = a + b  # sum\n", "y = a - b  # sum\n"),
        ("y = a * b\n", "y = a / (b or 1)\n"),
        ("y = a * 2.5\n", "y = a / 2.5\n"),
        ("y = a * -2\n", "y = a / -2\n"),
        ("y = a // b\n", "y = a / b\n"),
        ("total *= step  # why\n", "total /= (step or 1)  # why\n"),
        ("y = a ** 2\n", "y = a * 2\n"),
        ("total += step\n", "total -= step\n"),
    ],
)
def test_arithmetic_swaps_the_operator(text: str, expected: str) -> None:
    assert apply("py.arithmetic", text).new_text == expected


def test_negative_constants_are_numbers_not_minus_signs() -> None:
    results = {apply("py.constant", "x = -0.5 * y\n", seed).new_text for seed in range(30)}
    assert "x = 0.5 * y\n" in results  # the rare sign flip drops the minus instead of writing --0.5
    assert all("--" not in text for text in results)
    assert "x = -0.25 * y\n" in results


def test_an_operator_with_a_comment_inside_is_rewritten_as_a_node() -> None:
    text = "y = (a +  # why\n     b) * c\n"
    results = {apply("py.arithmetic", text, seed).new_text for seed in range(10)}
    assert results == {"y = (a - b) * c\n", "y = (a +  # why\n     b) / (c or 1)\n"}


def test_a_product_turned_into_a_division_does_not_divide_by_zero() -> None:
    """Dev cases may never hold a 0 where unseen ones do: ``a * b`` turned round divides by ``(b or 1)``."""
    text = "def f(a, b):\n    return 3 * (a - b)\n"
    mutation = next(
        m for seed in range(20) if "to /" in (m := apply("py.arithmetic", text, seed)).description
    )
    assert mutation.description.endswith(", a divisor of 0 taken as 1")
    namespace: dict[str, object] = {}
    exec(mutation.new_text, namespace)
    assert namespace["f"](2, 2) == 3.0 and namespace["f"](5, 1) == 0.75  # type: ignore[operator]


def test_arithmetic_leaves_string_concatenation_alone() -> None:
    assert apply("py.arithmetic", "s = 'a' + name\n") is None


@pytest.mark.parametrize(
    "text", ["scores = [0.0] * len(bins)\n", "row = (1, 2) + rest\n", "xs = [x for x in a] * 2\n"]
)
def test_arithmetic_leaves_a_sequence_written_out_alone(text: str) -> None:
    # ``[0.0] + len(bins)`` raises TypeError: before, 22 of 40 edits of a list filled by index did
    assert apply("py.arithmetic", text) is None


def test_boolean_swaps_and_or() -> None:
    text = "if ready and (count > 3 or forced):\n    go()\n"
    results = {apply("py.boolean", text, seed).new_text for seed in range(20)}
    assert results == {
        "if ready or (count > 3 or forced):\n    go()\n",
        "if ready and (count > 3 and forced):\n    go()\n",
    }


def test_layer_one_never_adds_or_removes_statements(binpack: str) -> None:
    for name in ("py.constant", "py.compare", "py.arithmetic", "py.boolean"):
        for seed in range(15):
            mutation = apply(name, binpack, seed)
            assert mutation is not None and mutation.new_text != binpack
            assert statements(mutation.new_text) == statements(binpack)
            assert "# tight fits score higher" in mutation.new_text


def test_nothing_to_change_or_broken_source_gives_none() -> None:
    assert apply("py.compare", "x = 1\n") is None
    assert apply("py.boolean", "x = 1\n") is None
    assert apply("py.constant", "def f(:\n    return 1\n") is None


def test_a_zero_guard_is_no_material_for_constant_or_boolean_edits() -> None:
    """``(b or 1)`` is the operators' guard against a 0: ``(b or 2)`` or ``(b and 1)`` would mean nothing."""
    text = "def f(a, b, c):\n    return 3 * a / (b or 1) if c or a else 0\n"
    constants = {apply("py.constant", text, seed).new_text for seed in range(40)}
    assert all("(b or 1)" in new for new in constants) and len(constants) > 2
    booleans = {apply("py.boolean", text, seed).new_text for seed in range(20)}
    assert booleans == {"def f(a, b, c):\n    return 3 * a / (b or 1) if c and a else 0\n"}
