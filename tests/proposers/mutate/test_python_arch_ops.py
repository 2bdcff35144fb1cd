"""Layer 3 Python operators: definitions, call arguments, operands and returned values."""

from __future__ import annotations

import random

from assay.proposers.mutate import OPERATORS


def apply(name: str, text: str, seed: int = 0):
    return OPERATORS.get(name).apply("mod.py", text, random.Random(seed))


def test_reorder_definitions_swaps_two_neighbouring_functions_with_decorators() -> None:
    text = "@cache\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n"
    mutation = apply("py.reorder_definitions", text)
    assert mutation.new_text == "def b():\n    return 2\n\n\n@cache\ndef a():\n    return 1\n"
    assert mutation.description == "python: moved b() (line 6) before a() (line 2)"


def test_swap_arguments_swaps_two_positional_arguments() -> None:
    mutation = apply("py.swap_arguments", "r = pow(base, 3)  # cube\n")
    assert mutation.new_text == "r = pow(3, base)  # cube\n"
    assert apply("py.swap_arguments", "r = f(x, x, *rest)\n") is None


def test_swap_operands_adds_parentheses_only_where_needed() -> None:
    assert apply("py.swap_operands", "d = a - b\n").new_text == "d = b - a\n"
    assert apply("py.swap_operands", "mid = (lo + hi) // 2\n").new_text == "mid = (2) // (lo + hi or 1)\n"
    assert apply("py.swap_operands", "ok = x < limit\n").new_text == "ok = limit < x\n"
    assert apply("py.swap_operands", "s = a + b\n") is None  # commutative: nothing to gain


def test_return_variant_returns_a_value_the_function_already_has() -> None:
    text = "def f(x, y):\n    z = x * y\n    return z\n"
    results = {apply("py.return_variant", text, seed).new_text for seed in range(20)}
    assert results == {text.replace("return z", f"return {name}") for name in ("x", "y")}


def test_return_variant_ignores_names_assigned_after_the_return_and_nested_functions() -> None:
    text = "def f(x):\n    if x:\n        return x\n    late = 2\n    def g():\n        inner = 3\n        return inner\n    return late\n"
    results = {apply("py.return_variant", text, seed).description for seed in range(40)}
    assert all("`late`" not in d.split(" instead of ")[0] or "line 8" in d for d in results)
    assert not any("`inner` instead of `x`" in d for d in results)


def test_no_layer_three_target_gives_none() -> None:
    for name in ("py.reorder_definitions", "py.swap_arguments", "py.swap_operands", "py.return_variant"):
        assert apply(name, "x = 1\n") is None


def test_a_division_swapped_round_takes_a_divisor_of_0_as_1() -> None:
    """``(remaining - item) / c`` turned round crashed on every bin an item fills exactly (22 swaps of 40 of such a
    method raised ZeroDivisionError); a new divisor is guarded as ``py.arithmetic`` guards one."""
    text = "r = (remaining - item) / capacity\n"
    swapped = next(
        m for seed in range(20) if "/ capacity`" in (m := apply("py.swap_operands", text, seed)).description
    )
    assert swapped.new_text == "r = (capacity) / (remaining - item or 1)\n"
    assert swapped.description.endswith(", a divisor of 0 taken as 1")
    namespace: dict[str, float] = {"remaining": 40.0, "item": 40.0, "capacity": 150.0}
    exec(swapped.new_text, namespace)
    assert namespace["r"] == 150.0
    assert apply("py.swap_operands", "r = a % 3\n").new_text == "r = 3 % (a or 1)\n"
    assert apply("py.swap_operands", "r = a / (b or 1)\n").new_text == "r = (b or 1) / (a or 1)\n"
    # a number other than 0 divides safely, and numpy divides an array by 0 without raising
    assert apply("py.swap_operands", "r = 2.0 / b\n").new_text == "r = b / 2.0\n"
    arrays = "import numpy as np\n\n\ndef f(bins: np.ndarray):\n    return 1.0 / bins\n"
    assert apply("py.swap_operands", arrays).new_text.endswith("    return bins / 1.0\n")
