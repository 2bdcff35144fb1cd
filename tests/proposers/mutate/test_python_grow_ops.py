"""Operators that grow code: terms, guarded returns and nonlinearities from the function's own names, on
functions of several shapes (none of them knows the task)."""

from __future__ import annotations

import ast
import contextlib
import copy
import math
import random
import textwrap
from collections import Counter

import pytest

from assay.proposers.mutate import OPERATORS
from assay.proposers.mutate.python_grow_ops import NEW_INTS, OVERRIDE, flipped, turned_round
from assay.proposers.tune import search_space

FUNCTIONS = {
    "best_fit": "def priority(item: float, remaining: float) -> float:\n    return -(remaining - item)\n",
    "locals": (
        'import math\n\n\ndef score(x, y, *, scale=2.0):\n    """Doc."""\n    z = x * scale\n'
        "    if z > y:\n        return z - y  # comment kept\n    w = math.log1p(abs(y))\n    return w + z\n"
    ),
    "method": "class Rank:\n    def weight(self, a, b):\n        total = a + b\n        return total / 2\n",
}


def names_of(source: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}


@pytest.mark.parametrize("shape", sorted(FUNCTIONS))
@pytest.mark.parametrize("operator", ["py.add_term", "py.guard", "py.wrap"])
def test_growth_is_valid_new_and_built_from_the_functions_names(shape: str, operator: str) -> None:
    source = FUNCTIONS[shape]
    seen = set()
    for seed in range(12):
        mutation = OPERATORS.get(operator).apply("f.py", source, random.Random(seed))
        assert mutation is not None, (operator, shape, seed)
        tree = ast.parse(mutation.new_text)
        assert ast.dump(tree) != ast.dump(ast.parse(source))
        new_names = names_of(mutation.new_text) - names_of(source)
        assert new_names <= {"abs", "min", "max"}, new_names  # nothing from outside the function
        assert "self" not in {n for n in names_of(mutation.new_text)} - names_of(source)
        assert mutation.description.startswith("python: ")
        seen.add(mutation.new_text)
        if shape == "locals":
            assert "# comment kept" in mutation.new_text
    assert len(seen) >= 4  # the draws vary


def test_a_guard_adds_an_if_that_returns_before_the_return() -> None:
    mutation = OPERATORS.get("py.guard").apply("f.py", FUNCTIONS["best_fit"], random.Random(2))
    assert mutation is not None
    body = ast.parse(mutation.new_text).body[0].body  # type: ignore[attr-defined]
    assert [type(s).__name__ for s in body] == ["If", "Return"]
    assert isinstance(body[0].body[0], ast.Return)


def test_locals_assigned_after_a_return_are_not_used_there() -> None:
    source = "def f(a):\n    if a:\n        return a\n    late = a * 3\n    return late\n"
    for seed in range(30):
        mutation = OPERATORS.get("py.add_term").apply("f.py", source, random.Random(seed))
        assert mutation is not None
        first_return = mutation.new_text.splitlines()[2]
        assert "late" not in first_return


def test_operators_sit_at_their_layers() -> None:
    layers = {name: OPERATORS.get(name).layer for name in ("py.add_term", "py.guard", "py.wrap")}
    assert layers == {"py.add_term": 2, "py.guard": 2, "py.wrap": 3}


def test_a_guard_can_split_out_a_range_of_a_name_or_a_difference() -> None:
    ranges = []
    for seed in range(80):
        mutation = OPERATORS.get("py.guard").apply("f.py", FUNCTIONS["best_fit"], random.Random(seed))
        assert mutation is not None
        test = ast.parse(mutation.new_text).body[0].body[0].test  # type: ignore[attr-defined]
        if isinstance(test, ast.Compare) and len(test.ops) == 2:
            zero, offset, width = test.left, test.comparators[0], test.comparators[1]
            assert isinstance(zero, ast.Constant) and zero.value == 0
            assert isinstance(width, ast.Constant) and width.value > 0  # a range that holds some values
            assert isinstance(offset, ast.BinOp) and isinstance(offset.op, ast.Sub)
            ranges.append(ast.unparse(offset.left))
    assert {"item", "remaining"} & set(ranges)
    assert {"remaining - item", "item - remaining"} & set(ranges)


def new_constants(before: str, after: str) -> list[tuple[type, object]]:
    """The numbers ``after`` has that ``before`` does not, as (type, value): 2 and 2.0 are told apart."""

    def numbers(source: str) -> Counter[tuple[type, object]]:
        tree = ast.parse(source)
        return Counter((type(n.value), n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant))

    return list((numbers(after) - numbers(before)).elements())


@pytest.mark.parametrize("operator", ["py.add_term", "py.guard"])
def test_new_constants_are_floats_beside_a_float_and_mostly_ints_where_nothing_says(operator: str) -> None:
    kinds: dict[str, list[type]] = {"float literal": [], "no literal": []}
    sources = {
        "float literal": "def score(x, y):\n    return 0.5 * x - y\n",
        "no literal": FUNCTIONS["best_fit"],
    }
    for seed in range(200):
        for label, source in sources.items():
            mutation = OPERATORS.get(operator).apply("f.py", source, random.Random(seed))
            assert mutation is not None
            added = new_constants(source, mutation.new_text)
            assert added, mutation.new_text
            assert len({kind for kind, _ in added}) == 1, mutation.new_text  # one kind within an edit
            kinds[label].append(added[0][0])
    assert set(kinds["float literal"]) == {float}
    ints = kinds["no literal"].count(int) / len(kinds["no literal"])
    assert 0.65 < ints < 0.85, ints  # ints three times in four, floats the rest


def guards(source: str, seeds: int) -> list[ast.If]:
    found = []
    for seed in range(seeds):
        mutation = OPERATORS.get("py.guard").apply("f.py", source, random.Random(seed))
        assert mutation is not None
        function = ast.parse(mutation.new_text).body[-1]
        found.append(next(s for s in function.body if isinstance(s, ast.If)))  # type: ignore[attr-defined]
    return found


def test_a_guard_can_test_a_computed_part_of_the_returned_value() -> None:
    source = "import math\n\n\ndef f(x, y):\n    return -math.log1p(x * y)\n"
    tested = set()
    for branch in guards(source, 60):
        test = branch.test
        assert isinstance(test, ast.Compare)
        tested.add(ast.unparse(test.comparators[0] if len(test.ops) == 2 else test.left))
    # From the names alone a guard tests x, y or a difference of them; these come from the returned value.
    assert {"x * y", "math.log1p(x * y)"} <= tested


def test_a_guarded_case_scales_or_shifts_the_value_and_a_scale_is_never_one() -> None:
    kinds: Counter[str] = Counter()
    for branch in guards(FUNCTIONS["best_fit"], 60):
        value = branch.body[0].value  # type: ignore[attr-defined]
        assert isinstance(value, ast.BinOp)
        assert ast.unparse(value.left) == "-(remaining - item)"  # the value the function returns
        kinds[type(value.op).__name__] += 1
        if isinstance(value.op, ast.Mult):
            assert isinstance(value.right, ast.Constant) and value.right.value != 1
    assert set(kinds) == {"Mult", "Add", "Sub"}


def test_half_the_guarded_cases_override_the_value_and_most_guards_band_its_computed_part() -> None:
    branches = guards(FUNCTIONS["best_fit"], 200)
    overrides = [
        b.body[0].value  # type: ignore[attr-defined]
        for b in branches
        if isinstance(b.body[0].value.right, ast.Constant)  # type: ignore[attr-defined]
        and b.body[0].value.right.value == OVERRIDE  # type: ignore[attr-defined]
        and not isinstance(b.body[0].value.op, ast.Mult)  # type: ignore[attr-defined]
    ]
    assert 0.4 < len(overrides) / len(branches) < 0.6  # the case loses (E - 1000) or wins (E + 1000) outright
    assert {type(o.op) for o in overrides} == {ast.Add, ast.Sub}
    banded = [
        b for b in branches
        if len(b.test.ops) == 2  # type: ignore[attr-defined]
        and ast.unparse(b.test.comparators[0].left) == "remaining - item"  # type: ignore[attr-defined]
    ]  # fmt: skip
    assert (
        0.6 < len(banded) / len(branches) < 0.85
    )  # 0 < (remaining - item) - low < width: the part, not a name


def test_an_override_is_tuned_mostly_above_the_numbers_the_palettes_fit() -> None:
    """An override is tuned on a log scale around its first size (an int from a tenth to ten times it, a float
    from a hundredth to a hundred times). From 100 half the range (10 to 100 for an int) lay among the numbers a
    band of the palette splits: shifts that nudge rather than lose the case outright. On FunSearch's bin packing
    a band that helps needs a shift of about 100 or more."""
    top = max(NEW_INTS)  # the palette's largest number
    tuned = Counter[bool]()
    for branch in guards(FUNCTIONS["best_fit"], 200):
        value = branch.body[0].value  # type: ignore[attr-defined]
        if not (isinstance(value.right, ast.Constant) and value.right.value == OVERRIDE):
            continue
        source = "def priority(item, remaining):\n" + textwrap.indent(ast.unparse(branch), "    ")
        space = search_space({"priority.py": source})
        shift = next(p for p in space.parameters if p.site.value == OVERRIDE)
        below = math.log(top / shift.low) / math.log(shift.high / shift.low) if shift.low < top else 0
        assert shift.log and below <= (0 if shift.integer else 0.25), shift.describe()
        tuned[bool(shift.integer)] += 1
    assert tuned[True] > 30 and tuned[False] > 5


def test_a_band_starts_wide_a_low_bound_below_a_high_one_from_the_palette() -> None:
    bands = [
        (b.test.comparators[0].right.value, b.test.comparators[0].right.value + b.test.comparators[1].value)  # type: ignore[attr-defined]
        for b in guards(FUNCTIONS["best_fit"], 120)
        if isinstance(b.test, ast.Compare) and len(b.test.ops) == 2
    ]
    assert len(bands) > 10
    for low, high in bands:
        assert low < high
        assert high / low >= 2  # drawn from the two halves of the palette: a band tuning can narrow
        assert low != 1  # tuning leaves 0 and 1 in a function alone, so a bound of 1 could never move


def test_a_guard_never_tests_a_part_that_uses_a_lambdas_or_a_comprehensions_own_names() -> None:
    source = "def f(xs, w):\n    return -sum(x * w for x in xs) + max(xs, key=lambda v: v * 2)\n"
    tested = set()
    for branch in guards(source, 80):
        namespace = {"xs": [1, 2], "w": 3}
        # The test must find its names where the guard sits, with only the function's names bound (a list
        # compared with a number is a TypeError of the names path, recorded as a failed candidate).
        with contextlib.suppress(TypeError):
            eval(compile(ast.Expression(branch.test), "f.py", "eval"), {"sum": sum, "max": max, **namespace})
        tested.add(ast.unparse(branch.test))
    assert any("sum(" in test for test in tested)  # the parts around the generator are still tested


def test_turned_round_turns_only_the_comparisons_the_edit_added_and_keeps_the_rest_as_written() -> None:
    parent = "def f(a, b):\n    if a > 3:  # kept\n        return 0\n    return -(b - a)\n"
    edited = parent.replace(
        "    return -(b - a)", "    if b - a >= 10:\n        return -(b - a) * 2\n    return -(b - a)"
    )
    turned = turned_round(parent, "f.py", edited)
    assert turned is not None
    assert turned.new_text == edited.replace("b - a >= 10", "b - a <= 10")
    assert "if a > 3:  # kept" in turned.new_text  # the parent's own comparison, as written
    assert turned.description == "python: turned `b - a >= 10` round to `b - a <= 10` in f() line 4"


def test_turned_round_needs_a_single_comparison_the_edit_added() -> None:
    parent = "def f(a, b):\n    return -(b - a)\n"
    band = "def f(a, b):\n    if 0 < b - a - 2 < 18:\n        return -(b - a) * 2\n    return -(b - a)\n"
    term = "def f(a, b):\n    return -(b - a) + 2 * a\n"
    mirrored = turned_round(parent, "f.py", band)  # a band is mirrored instead: tested separately
    assert mirrored is not None and "0 < a - b - 2 < 18" in mirrored.new_text
    assert turned_round(parent, "f.py", term) is None
    assert turned_round("def f(:\n", "f.py", term) is None
    guarded = "def f(a, b):\n    if a < 5:\n        return 1\n    return -(b - a)\n"
    swapped = guarded.replace("a < 5", "a <= 5")  # a comparison changed, none added
    assert turned_round(guarded, "f.py", swapped) is None
    both = "def f(a, b):\n    if a < 5 or b > 7:\n        return 1\n    return -(b - a)\n"
    turned = turned_round(parent, "f.py", both)
    assert turned is not None and "if a > 5 or b < 7:" in turned.new_text
    assert "(and 1 more)" in turned.description


@pytest.mark.parametrize(
    ("subject", "mirrored"),
    [("a - b", "b - a"), ("-(a * b)", "a * b"), ("a * b", "-(a * b)"), ("max(a, b)", "-max(a, b)")],
)
def test_an_added_band_is_turned_round_to_the_other_side_of_zero(subject: str, mirrored: str) -> None:
    parent = "def f(a, b):\n    if 0 < a - 5 < 3:  # kept\n        return 0\n    return a - b\n"
    edited = parent.replace(
        "    return a - b\n",
        f"    if 0 < {subject} - 2 < 18:\n        return a - b - 100\n    return a - b\n",
    )
    turned = turned_round(parent, "f.py", edited)
    assert turned is not None
    assert turned.new_text == edited.replace(f"0 < {subject} - 2 < 18", f"0 < {mirrored} - 2 < 18")
    assert "if 0 < a - 5 < 3:  # kept" in turned.new_text  # the parent's own band, as written
    assert turned.description.startswith(
        f"python: turned `0 < {subject} - 2 < 18` round to `0 < {mirrored} - 2"
    )
    assert compile(turned.new_text, "f.py", "exec")


def test_a_bands_two_numbers_tuned_apart_never_cross() -> None:
    """Its start and width, not two bounds: any start with any width >= 0 is a band that holds what it says."""
    bands = [
        b.test
        for b in guards(FUNCTIONS["best_fit"], 120)
        if isinstance(b.test, ast.Compare) and len(b.test.ops) == 2
    ]
    assert bands
    for test in bands:
        for start, width in [(54, 27), (0.5, 200.0), (120, 0)]:
            moved = copy.deepcopy(test)
            moved.comparators[0].right.value = start  # type: ignore[attr-defined]
            moved.comparators[1].value = width  # type: ignore[attr-defined]
            source = f"def fires(item, remaining):\n    return {ast.unparse(moved)}\n"
            namespace: dict[str, object] = {}
            exec(compile(source, "f.py", "exec"), namespace)
            fires = namespace["fires"]
            hits = [(i, r) for i in range(0, 160, 7) for r in range(0, 160, 7) if fires(i, r)]  # type: ignore[operator]
            subject = ast.unparse(moved.comparators[0].left)  # type: ignore[attr-defined]
            values = {eval(subject, {"item": i, "remaining": r}) for i, r in hits}
            assert all(start < v < start + width for v in values)


def test_flipped_turns_only_the_shifts_the_edit_added_to_a_returned_value() -> None:
    parent = "def f(a, b):\n    if a > 3:\n        return a + 1  # kept\n    return -(b - a)\n"
    edited = parent.replace(
        "    return -(b - a)\n",
        "    if 0 < b - a - 5 < 20:\n        return -(b - a) - 100\n    return -(b - a)\n",
    )
    made = flipped(parent, "f.py", edited)
    assert made is not None
    assert made.new_text == edited.replace("-(b - a) - 100", "-(b - a) + 100")
    assert "return a + 1  # kept" in made.new_text and "b - a - 5" in made.new_text  # the band stays as it is
    assert made.description == "python: flipped `-(b - a) - 100` to `-(b - a) + 100` in f() line 5"
    term = flipped("def f(a, b):\n    return a * b\n", "f.py", "def f(a, b):\n    return a * b + 2 * a\n")
    assert term is not None and "return a * b - 2 * a" in term.new_text


def test_flipped_needs_a_shift_of_a_value_the_parent_returns() -> None:
    parent = "def f(a, b):\n    return -(b - a)\n"
    scaled = "def f(a, b):\n    if a < 5:\n        return -(b - a) * 2\n    return -(b - a)\n"
    other = "def f(a, b):\n    if a < 5:\n        return a + b\n    return -(b - a)\n"
    assert flipped(parent, "f.py", scaled) is None  # a scale, not a shift
    assert flipped(parent, "f.py", other) is None  # a new value, not the parent's shifted
    assert flipped("def f(:\n", "f.py", scaled) is None


def test_a_band_never_reaches_the_top_of_the_palette() -> None:
    """A band up to the palette's largest number spans nearly every value the subject takes (see ``_range``)."""
    tops = set()
    for seed in range(300):
        mutation = OPERATORS.get("py.guard").apply("f.py", FUNCTIONS["best_fit"], random.Random(seed))
        assert mutation is not None
        test = ast.parse(mutation.new_text).body[0].body[0].test  # type: ignore[attr-defined]
        if isinstance(test, ast.Compare) and len(test.ops) == 2:
            start, width = test.comparators[0].right.value, test.comparators[1].value  # type: ignore[attr-defined]
            tops.add(start + width)
    assert tops and max(tops) < 100
    assert {20, 50} <= tops  # the larger half but its largest: both kinds of palette
    assert {5.0, 10.0} <= tops
