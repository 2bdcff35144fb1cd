"""Functions over numpy arrays (FunSearch's ``priority(item, bins: np.ndarray)``): the operators' edits run on
arrays instead of asking one for a truth value, and a function without such an annotation is edited as before."""

from __future__ import annotations

import ast
import random
from typing import Any

import numpy as np
import pytest

from assay.proposers.mutate import OPERATORS
from assay.proposers.mutate.pysource import apply_python
from assay.proposers.mutate.python_arrays import NO_ARRAYS, arrays_assumed, arrays_of
from assay.proposers.mutate.python_cases import case_parts, under_cases
from assay.proposers.mutate.python_grow_ops import elementwise_test, flipped, guard, turned_round
from assay.proposers.mutate.python_prune import added_branches, without_branch

FUNSEARCH = '''import numpy as np


def priority(item: float, bins: np.ndarray) -> np.ndarray:
    """Returns priority with which we want to add item to each bin."""
    return -(bins - item)
'''
LOCALS = """import numpy


def priority(item: float, bins: "numpy.ndarray") -> "numpy.ndarray":
    gaps = bins - item
    score = -gaps
    return score
"""
PRODUCT = FUNSEARCH.replace("return -(bins - item)", "return -(bins - item) + 0.5 * (item * bins)")
BINS = np.array([150.0, 120.0, 95.0, 61.0, 40.0, 30.0, 31.0, 0.5])


def run(text: str, item: float = 30.0) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(text, "priority.py", "exec"), namespace)
    return namespace["priority"](item, BINS.copy())


def function(text: str) -> ast.FunctionDef:
    tree = ast.parse(text)
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))


def test_the_names_that_hold_arrays_are_annotated_parameters_and_the_locals_made_from_them() -> None:
    tree = ast.parse(FUNSEARCH)
    arrays = arrays_of(function(FUNSEARCH), tree)
    assert arrays.names == {"bins"} and arrays.numpy == "np"
    tree = ast.parse(LOCALS)
    arrays = arrays_of(function(LOCALS), tree)
    assert arrays.names == {"bins", "gaps", "score"} and arrays.numpy == "numpy"
    unannotated = "import numpy as np\n\ndef priority(item, bins):\n    return -(bins - item)\n"
    assert arrays_of(function(unannotated), ast.parse(unannotated)) is NO_ARRAYS
    bare = "from numpy.typing import NDArray\n\ndef f(x: NDArray) -> float:\n    return x\n"
    assert arrays_of(function(bare), ast.parse(bare)).numpy is None


@pytest.mark.parametrize("source", [FUNSEARCH, LOCALS, PRODUCT], ids=["funsearch", "locals", "product"])
@pytest.mark.parametrize(
    "operator",
    [
        "py.guard",
        "py.wrap",
        "py.combine",
        "py.add_term",
        "py.arithmetic",
        "py.swap_operands",
        "py.return_variant",
    ],
)
def test_every_edit_of_a_function_over_arrays_runs_on_arrays(source: str, operator: str) -> None:
    """Before, ``if 0 < bins - item - 5 < 15:``, ``max(bins, 2)`` and ``(bins or 1)`` raised ValueError (the
    truth value of an array is ambiguous) on every instance, and the run stopped at a dead end."""
    made = 0
    for seed in range(40):
        mutation = OPERATORS.get(operator).apply("priority.py", source, random.Random(seed))
        if mutation is None:
            continue
        made += 1
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = run(mutation.new_text)
        assert np.shape(scores) in ((len(BINS),), ()), (mutation.description, mutation.new_text)
    assert made >= 20


def test_a_guard_over_arrays_is_a_case_of_np_where_and_its_band_is_the_scalar_band() -> None:
    two = FUNSEARCH.replace("bins: np.ndarray)", "bins: np.ndarray, capacity: float)")
    written = set()
    for seed in range(60):
        mutation = apply_python("py.guard", guard, "priority.py", two, random.Random(seed))
        assert mutation is not None
        tree = ast.parse(mutation.new_text)
        value = next(n for n in ast.walk(tree) if isinstance(n, ast.Return)).value
        if case_parts(value) is not None:
            written.add("where")
            assert "np.where(" in mutation.description and "added a guarded return" in mutation.description
            assert ast.dump(under_cases(value)) == ast.dump(ast.parse("-(bins - item)", mode="eval").body)
        else:  # a test of the scalars alone answers for every bin at once
            written.add("if")
            test = next(n for n in ast.walk(tree) if isinstance(n, ast.If)).test
            assert "bins" not in {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    assert written == {"where", "if"}
    for band, top in (("0 < s - 5 < 15", 20), ("0 < s - 0.1 < 4.9", 5), ("0 < s - 2 < 8", 10)):
        test = ast.parse(band, mode="eval").body
        elementwise = ast.unparse(elementwise_test(test))
        assert "abs(s - " in elementwise
        for s in np.arange(-5.0, 30.0, 0.25):  # the same range; an odd int width's top comes down by 1
            if not top - 1 <= s <= top:
                assert bool(eval(elementwise, {"s": s})) == bool(eval(band, {"s": s})), (band, s)


def test_a_second_guard_goes_over_the_first_and_flips_and_turns_apply_to_cases() -> None:
    once = FUNSEARCH.replace(
        "return -(bins - item)",
        "return np.where(abs(bins - item - 12) < 7, -(bins - item) - 100, -(bins - item))",
    )
    twice = apply_python("py.guard", guard, "priority.py", once, random.Random(0))
    assert twice is not None
    outer = next(n for n in ast.walk(ast.parse(twice.new_text)) if isinstance(n, ast.Return)).value
    assert case_parts(outer) is not None and "abs(bins - item - 12) < 7" in ast.unparse(outer.args[2])
    assert ast.unparse(under_cases(outer)) == "-(bins - item)"
    flip = flipped(FUNSEARCH, "priority.py", once)
    assert flip is not None and "-(bins - item) + 100, -(bins - item))" in flip.new_text
    turn = turned_round(FUNSEARCH, "priority.py", once)
    assert turn is not None and "abs(bins - item - 12) > 7" in turn.new_text
    run(flip.new_text), run(turn.new_text)


def test_a_case_the_run_added_is_pruned_to_the_value_under_it_and_a_users_own_where_is_not() -> None:
    best = FUNSEARCH.replace(
        "return -(bins - item)",
        "return np.where(abs(bins - item - 12) < 7, -(bins - item) - 100, -(bins - item))",
    )
    diff = "+    return np.where(abs(bins - item - 12) < 7, -(bins - item) - 100, -(bins - item))\n"
    assert added_branches(best, diff) == [6]
    pruned = without_branch("priority.py", best, 6)
    assert pruned is not None and pruned.new_text == FUNSEARCH
    assert "removed the case `abs(bins - item - 12) < 7`" in pruned.description
    own = FUNSEARCH.replace("return -(bins - item)", "return np.where(bins >= item, -(bins - item), -np.inf)")
    assert added_branches(own, "+    return np.where(bins >= item, -(bins - item), -np.inf)\n") == []


def test_a_function_without_an_array_annotation_is_edited_as_before() -> None:
    scalar = "def priority(item: float, remaining: float) -> float:\n    return -(remaining - item)\n"
    for seed in range(20):
        mutation = apply_python("py.guard", guard, "priority.py", scalar, random.Random(seed))
        assert mutation is not None and "np.where" not in mutation.new_text
        assert "if " in mutation.new_text


UNANNOTATED = "import numpy as np\n\n\ndef priority(item, bins):\n    return -(bins - item)\n"


def test_a_run_can_assume_an_unannotated_functions_parameters_are_arrays_where_numpy_is_imported() -> None:
    assert arrays_of(function(UNANNOTATED), ast.parse(UNANNOTATED)) is NO_ARRAYS
    with arrays_assumed():
        arrays = arrays_of(function(UNANNOTATED), ast.parse(UNANNOTATED))
        assert arrays.names == {"item", "bins"} and arrays.numpy == "np"
        # a parameter annotated as a plain number stays one
        typed = UNANNOTATED.replace("(item, bins)", "(item: float, bins)")
        assert arrays_of(function(typed), ast.parse(typed)).names == {"bins"}
        method = "import numpy\n\nclass P:\n    def score(self, bins):\n        return bins\n"
        assert arrays_of(function(method), ast.parse(method)).names == {"bins"}
        # without numpy, nothing would write the elementwise forms
        bare = UNANNOTATED.replace("import numpy as np\n", "")
        assert arrays_of(function(bare), ast.parse(bare)) is NO_ARRAYS
    with arrays_assumed(False):
        assert arrays_of(function(UNANNOTATED), ast.parse(UNANNOTATED)) is NO_ARRAYS


@pytest.mark.parametrize("operator", ["py.guard", "py.wrap", "py.combine", "py.add_term"])
def test_under_the_assumption_every_edit_of_an_unannotated_function_runs_on_arrays(operator: str) -> None:
    """FunSearch's priority without its annotations: before, as now without the assumption, a guard asked an
    array for one truth value on every instance (``if 0 < bins - item - 5 < 45:``)."""
    raised = written = 0
    for seed in range(40):
        plain = OPERATORS.get(operator).apply("priority.py", UNANNOTATED, random.Random(seed))
        if plain is not None:
            try:
                run(plain.new_text)
            except ValueError:
                raised += 1
        with arrays_assumed():
            mutation = OPERATORS.get(operator).apply("priority.py", UNANNOTATED, random.Random(seed))
        if mutation is None:
            continue
        written += 1
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = run(mutation.new_text)
        assert np.shape(scores) == (len(BINS),), (mutation.description, mutation.new_text)
    assert written >= 20
    if operator in ("py.guard", "py.combine"):
        assert raised >= 5  # the scalar forms do raise on arrays: the assumption is what makes these run


def test_without_a_name_for_numpy_no_edit_asks_an_array_for_one_truth_value() -> None:
    source = (
        "from numpy import ndarray\n\n\ndef priority(item: float, bins: ndarray) -> ndarray:\n"
        "    return -(bins - item)\n"
    )
    for seed in range(40):
        for operator in ("py.guard", "py.wrap", "py.combine"):
            mutation = OPERATORS.get(operator).apply("priority.py", source, random.Random(seed))
            if mutation is not None:
                with np.errstate(divide="ignore", invalid="ignore"):
                    run(mutation.new_text)


TOUR = """import numpy as np


def priority(current: int, distances: np.ndarray, unvisited: np.ndarray) -> np.ndarray:
    \"\"\"The priority of each unvisited city as the next stop: nearest first.\"\"\"
    return -distances[current, unvisited]
"""


def test_an_array_the_value_only_indexes_is_no_name_of_an_edit_and_its_element_is_a_subject() -> None:
    """Before, half the guards and terms used the whole matrix (``- 2.0 * distances``: shapes (5,) and (12, 12)
    do not broadcast) and every combination went into the index (``distances[current * distances, ...]``)."""
    points = np.random.default_rng(0).random((12, 2))
    distances = np.linalg.norm(points[:, None] - points[None], axis=2)
    unvisited = np.array([0, 1, 5, 7, 9])
    cases = 0
    for operator in ("py.guard", "py.add_term", "py.wrap", "py.combine"):
        for seed in range(30):
            mutation = OPERATORS.get(operator).apply("priority.py", TOUR, random.Random(seed))
            if mutation is None:
                continue
            namespace: dict[str, Any] = {}
            exec(compile(mutation.new_text, "priority.py", "exec"), namespace)
            scores = namespace["priority"](3, distances, unvisited)
            assert np.shape(scores) == (5,), mutation.new_text
            cases += "np.where(abs(distances[current, unvisited] - " in mutation.new_text
    assert cases >= 5  # a band of the looked-up distances, the part with the value's shape


def test_a_value_put_in_an_array_by_index_makes_no_array_of_the_index() -> None:
    text = FUNSEARCH.replace(
        "    return -(bins - item)\n",
        "    scores = np.zeros(len(bins))\n    for i in range(len(bins)):\n        scores[i] = -(bins[i] - item)\n"
        "    first, *rest = bins\n    return scores\n",
    )
    # before, ``i`` counted as an array (it is read in the target ``scores[i]``), and ``item / i`` went unguarded
    assert arrays_of(function(text), ast.parse(text)).names == {"bins", "scores", "first", "rest"}
