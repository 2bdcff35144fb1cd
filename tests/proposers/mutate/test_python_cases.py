"""A returned comprehension (``return [-(b - item) for b in bins]``: one score per element): edits go into its
element, a guard is a case ``case if test else E`` there, and flips and pruning treat such a case as an ``if``."""

from __future__ import annotations

import ast
import random
from typing import Any

import pytest

from assay.proposers.mutate import OPERATORS
from assay.proposers.mutate.pysource import Source, apply_python
from assay.proposers.mutate.python_cases import case_parts, under_cases
from assay.proposers.mutate.python_grow_ops import flipped, guard, return_sites, turned_round
from assay.proposers.mutate.python_prune import added_branches, without_branch

LISTED = (
    "def priority(item: float, bins: list[float]) -> list[float]:\n"
    '    """One score per bin."""\n'
    "    return [-(remaining - item) for remaining in bins]\n"
)
BINS = [150.0, 120.0, 95.0, 61.0, 40.0, 31.0, 30.0]


def scores(text: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(text, "priority.py", "exec"), namespace)
    return list(namespace["priority"](30.0, list(BINS)))


def edits_keeping_one_number_per_element(operator: str, text: str) -> set[str]:
    """Thirty edits of ``text`` by ``operator``, each of which scores every bin with one number; at least five
    of them different."""
    made = set()
    for seed in range(30):
        mutation = OPERATORS.get(operator).apply("priority.py", text, random.Random(seed))
        assert mutation is not None
        made.add(mutation.new_text)
        result = scores(mutation.new_text)
        assert len(result) == len(BINS) and all(isinstance(x, int | float) for x in result), mutation.new_text
    assert len(made) >= 5
    return made


def element(text: str) -> ast.expr:
    returned = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Return)).value
    assert isinstance(returned, ast.ListComp)
    return returned.elt


def test_the_site_of_a_returned_comprehension_is_its_element_with_its_loop_variable() -> None:
    (site,) = return_sites(Source(LISTED, ast.parse(LISTED)))
    assert ast.unparse(site.value) == "-(remaining - item)"
    assert site.names == ["item", "remaining"]  # not ``bins``: a list, which no scalar edit fits


@pytest.mark.parametrize("operator", ["py.guard", "py.add_term", "py.wrap", "py.combine"])
def test_every_edit_of_a_returned_comprehension_keeps_one_number_per_element(operator: str) -> None:
    """Before, ``[...] - 100`` and ``bins < 50 * item`` raised, ``[...] * 10`` repeated the list, and the run
    stopped at a dead end within 14 generations."""
    for text in edits_keeping_one_number_per_element(operator, LISTED):
        assert text.endswith(" for remaining in bins]\n"), text


def test_a_guard_in_an_element_is_a_conditional_case_and_a_second_goes_over_the_first() -> None:
    once = apply_python("py.guard", guard, "priority.py", LISTED, random.Random(1))
    assert once is not None
    case = element(once.new_text)
    parts = case_parts(case)
    assert isinstance(case, ast.IfExp) and parts is not None
    assert ast.unparse(parts[0]) == "0 < remaining - item - 5 < 15"
    assert ast.unparse(under_cases(case)) == "-(remaining - item)"
    assert "added a guarded return" in once.description
    twice = apply_python("py.guard", guard, "priority.py", once.new_text, random.Random(3))
    assert twice is not None
    outer = element(twice.new_text)
    assert case_parts(outer) is not None and ast.unparse(under_cases(outer)) == "-(remaining - item)"
    assert ast.dump(case_parts(outer)[2]) == ast.dump(case)  # type: ignore[index]
    assert len(scores(twice.new_text)) == len(BINS)


def test_flips_turns_and_pruning_reach_into_the_element() -> None:
    shifted = LISTED.replace(
        "[-(remaining - item) for",
        "[-(remaining - item) - 100 if 0 < remaining - item - 5 < 15 else -(remaining - item) for",
    )
    flip = flipped(LISTED, "priority.py", shifted)
    assert flip is not None and "[-(remaining - item) + 100 if" in flip.new_text
    turn = turned_round(LISTED, "priority.py", shifted)
    assert turn is not None and "0 < item - remaining - 5 < 15" in turn.new_text
    termed = LISTED.replace("[-(remaining - item) for", "[-(remaining - item) + 2 * item for")
    term_flip = flipped(LISTED, "priority.py", termed)
    assert term_flip is not None and "[-(remaining - item) - 2 * item for" in term_flip.new_text
    line = shifted.splitlines()[2].strip()
    assert added_branches(shifted, f"+    {line}\n") == [3]
    pruned = without_branch("priority.py", shifted, 3)
    assert pruned is not None and pruned.new_text == LISTED
    assert "removed the case `0 < remaining - item - 5 < 15`" in pruned.description
    for text in (flip.new_text, turn.new_text, term_flip.new_text):
        assert len(scores(text)) == len(BINS)


def test_a_users_own_conditional_is_no_case_of_ours() -> None:
    assert case_parts(ast.parse("a if a > 0 else 0", mode="eval").body) is None
    assert case_parts(ast.parse("np.where(fits, scores, -np.inf)", mode="eval").body) is None
    own = LISTED.replace(
        "[-(remaining - item) for", "[-(remaining - item) if remaining >= item else -1e9 for"
    )
    assert added_branches(own, "+    " + own.splitlines()[2].strip() + "\n") == []


MADE = {
    "np.array": "import numpy as np\n\n\ndef priority(item, bins):\n    return np.array([-(b - item) for b in bins])\n",
    "list": "def priority(item, bins):\n    return list(-(b - item) for b in bins)\n",
    "tuple": "def priority(item, bins):\n    return tuple([-(b - item) for b in bins])\n",
    "np.fromiter": (
        "import numpy as np\n\n\ndef priority(item, bins):\n"
        "    return np.fromiter((-(b - item) for b in bins), dtype=float)\n"
    ),
}


@pytest.mark.parametrize("spelling", sorted(MADE))
@pytest.mark.parametrize("operator", ["py.guard", "py.add_term", "py.wrap", "py.combine"])
def test_a_collection_made_of_a_comprehension_is_edited_in_its_element(spelling: str, operator: str) -> None:
    """``return np.array([...])`` and the like: before, every guard asked an array or a list for one truth
    value (``min(np.array([...]), 5)``, ``np.array([...]) - 100``) and raised, as on a bare list before."""
    text = MADE[spelling]
    (site,) = return_sites(Source(text, ast.parse(text)))
    assert ast.unparse(site.value) == "-(b - item)" and site.names == ["item", "b"]
    for seed in range(20):
        mutation = OPERATORS.get(operator).apply("priority.py", text, random.Random(seed))
        assert mutation is not None
        assert " for b in bins" in mutation.new_text.splitlines()[-1], mutation.new_text
        result = scores(mutation.new_text)
        assert len(result) == len(BINS) and all(float(x) == float(x) for x in result), mutation.new_text


def test_a_case_in_a_made_collection_is_flipped_and_pruned_as_in_a_bare_one() -> None:
    text = MADE["np.array"]
    shifted = text.replace(
        "[-(b - item) for", "[-(b - item) - 100 if 0 < b - item - 5 < 15 else -(b - item) for"
    )
    flip = flipped(text, "priority.py", shifted)
    assert flip is not None and "[-(b - item) + 100 if" in flip.new_text
    line = shifted.splitlines()[-1].strip()
    assert added_branches(shifted, f"+    {line}\n") == [5]
    pruned = without_branch("priority.py", shifted, 5)
    assert pruned is not None and pruned.new_text == text


def test_a_call_that_reorders_or_reduces_is_no_collection_of_elements() -> None:
    """``sorted([...])`` loses which score is whose, ``sum(...)`` is one number: the value is edited whole."""
    for call in ("sorted", "sum", "max"):
        text = f"def priority(item, bins):\n    return {call}([-(b - item) for b in bins])\n"
        (site,) = return_sites(Source(text, ast.parse(text)))
        assert isinstance(site.value, ast.Call) and site.element is None


LOOPED = (
    "def priority(item, bins):\n"
    '    """One score per bin, built in a loop."""\n'
    "    scores = []\n"
    "    for remaining in bins:\n"
    "        left = remaining - item\n"
    "        scores.append(-left)\n"
    "    return scores\n"
)


def test_a_list_built_in_a_loop_is_edited_in_what_the_loop_appends() -> None:
    (site,) = return_sites(Source(LOOPED, ast.parse(LOOPED)))
    assert ast.unparse(site.value) == "-left"
    assert site.names == ["item", "left", "remaining"]  # not ``bins`` (iterated) nor ``scores`` (the list)
    assert site.ret.lineno == 6


@pytest.mark.parametrize("operator", ["py.guard", "py.add_term", "py.wrap", "py.combine"])
def test_every_edit_of_a_list_built_in_a_loop_keeps_one_number_per_element(operator: str) -> None:
    """Before, 32 guards of 40 raised (``scores - 100``, ``scores < 50 * item``) and 19 terms of 40
    (``scores - 2.0 * scores``): the list itself was the value edited."""
    for text in edits_keeping_one_number_per_element(operator, LOOPED):
        assert text.endswith("    return scores\n") and "scores.append(" in text, text


def test_a_case_appended_in_a_loop_is_a_conditional_flipped_and_pruned_as_in_a_comprehension() -> None:
    once = apply_python("py.guard", guard, "priority.py", LOOPED, random.Random(1))
    assert once is not None
    appended = once.new_text.splitlines()[5].strip()
    assert appended.startswith("scores.append(") and " if " in appended and appended.endswith(" else -left)")
    shifted = LOOPED.replace(
        "scores.append(-left)", "scores.append(-left - 100 if 0 < left - 5 < 15 else -left)"
    )
    flip = flipped(LOOPED, "priority.py", shifted)
    assert flip is not None and "scores.append(-left + 100 if" in flip.new_text
    assert added_branches(
        shifted, "+        scores.append(-left - 100 if 0 < left - 5 < 15 else -left)\n"
    ) == [6]
    pruned = without_branch("priority.py", shifted, 6)
    assert pruned is not None and pruned.new_text == LOOPED
    for text in (once.new_text, flip.new_text):
        assert len(scores(text)) == len(BINS)


def test_only_a_returned_list_appended_in_a_loop_of_the_function_itself_is_built_so() -> None:
    made = LOOPED.replace("    return scores\n", "    return np.array(scores)\n")
    assert [ast.unparse(s.value) for s in return_sites(Source(made, ast.parse(made)))] == ["-left"]
    once = "def priority(item, bins):\n    scores = []\n    scores.append(item)\n    return scores\n"  # not in a loop: the returned value is edited as before
    assert [ast.unparse(s.value) for s in return_sites(Source(once, ast.parse(once)))] == ["scores"]
    inner = (
        "def priority(item, bins):\n    scores = []\n\n    def add(b):\n        for x in b:\n"
        "            scores.append(x)\n\n    add(bins)\n    return scores\n"
    )  # another function's loop
    assert "scores" in [ast.unparse(s.value) for s in return_sites(Source(inner, ast.parse(inner)))]
    records = LOOPED.replace("scores.append(-left)", "scores.append((remaining, -left))")
    assert [ast.unparse(s.value) for s in return_sites(Source(records, ast.parse(records)))] == ["scores"]


def test_a_collection_is_no_name_of_what_a_loop_appends() -> None:
    """What a loop iterates (an outer loop's row too) and what the function looks up in hold many values; the
    loop's own variable is a name even on the loop's line."""
    nested = (
        "def priority(item, rows):\n    scores = []\n    for row in rows:\n        for b in row:\n"
        "            scores.append(b - item)\n    return scores\n"
    )
    indexed = (
        "def priority(item, bins):\n    scores = []\n    i = 0\n    while i < len(bins):\n"
        "        scores.append(-(bins[i] - item))\n        i += 1\n    return scores\n"
    )
    one_line = "def priority(item, bins):\n    scores = []\n    for b in bins: scores.append(b - item)\n    return scores\n"
    for text, names in ((nested, ["item", "b"]), (indexed, ["item", "i"]), (one_line, ["item", "b"])):
        (site,) = return_sites(Source(text, ast.parse(text)))
        assert site.names == names, text


FILLED = (
    "def priority(item, bins):\n"
    '    """One score per bin, put in place by index."""\n'
    "    scores = [0.0] * len(bins)\n"
    "    for i, remaining in enumerate(bins):\n"
    "        scores[i] = -(remaining - item)\n"
    "    return scores\n"
)
NEGATED = "import numpy as np\n\n\n" + LOOPED.replace("scores.append(-left)", "scores.append(left)").replace(
    "    return scores\n", "    return -np.array(scores)\n"
)


def test_a_list_filled_by_index_in_a_loop_is_edited_in_what_the_loop_puts_in_it() -> None:
    (site,) = return_sites(Source(FILLED, ast.parse(FILLED)))
    assert ast.unparse(site.value) == "-(remaining - item)" and site.ret.lineno == 5
    assert "remaining" in site.names and not {"bins", "scores"} & set(site.names)
    sliced = FILLED.replace("scores[i] = ", "scores[i:i + 1] = ")  # puts in many: the list is edited whole
    assert [ast.unparse(s.value) for s in return_sites(Source(sliced, ast.parse(sliced)))] == ["scores"]
    (negated,) = return_sites(Source(NEGATED, ast.parse(NEGATED)))
    assert ast.unparse(negated.value) == "left"  # ``-np.array(scores)`` holds what the loop appends, negated


@pytest.mark.parametrize("operator", ["py.guard", "py.add_term", "py.wrap", "py.combine"])
@pytest.mark.parametrize("text", [FILLED, NEGATED], ids=["by-index", "negated-array"])
def test_every_edit_of_a_list_filled_by_index_or_returned_negated_keeps_one_number_per_element(
    operator: str, text: str
) -> None:
    """Before, 32 guards of 40 and every term raised on the list filled by index (``scores - 100``); on
    ``-np.array(scores)``, 38 guards of 40."""
    for made in edits_keeping_one_number_per_element(operator, text):
        assert made.endswith(text[text.index("    return ") :]), made
    for seed in range(20):  # an operator change (22 of 40 raised: ``[0.0] + len(bins)``)
        changed = OPERATORS.get("py.arithmetic").apply("priority.py", text, random.Random(seed))
        assert changed is not None and len(scores(changed.new_text)) == len(BINS)


def test_a_case_put_in_by_index_is_flipped_and_pruned_as_an_appended_one() -> None:
    line = "        scores[i] = -(remaining - item)\n"
    case = "        scores[i] = -(remaining - item) - 100 if 0 < remaining - item - 5 < 15 else -(remaining - item)\n"
    shifted = FILLED.replace(line, case)
    flip = flipped(FILLED, "priority.py", shifted)
    assert flip is not None and flip.new_text == shifted.replace(") - 100 if", ") + 100 if")
    assert added_branches(shifted, "+" + case) == [5]
    pruned = without_branch("priority.py", shifted, 5)
    assert pruned is not None and pruned.new_text == FILLED
    guarded = apply_python("py.guard", guard, "priority.py", FILLED, random.Random(1))
    assert guarded is not None and guarded.new_text.splitlines()[4].strip().startswith("scores[i] = ")


KEYED = "def priority(item, bins):\n    return {i: -(b - item) for i, b in enumerate(bins)}\n"


@pytest.mark.parametrize("operator", ["py.guard", "py.add_term", "py.wrap", "py.combine"])
def test_a_dict_comprehension_is_edited_in_its_values_and_its_keys_are_left_alone(operator: str) -> None:
    """Before, the dict itself was the value: 35 guards of 40 and every term raised (``{...} - 100``), and 24
    wraps of 40 wrapped it or its key (``{abs(i): ...}`` files a score under another bin)."""
    (site,) = return_sites(Source(KEYED, ast.parse(KEYED)))
    assert ast.unparse(site.value) == "-(b - item)" and "bins" not in site.names
    made = set()
    for seed in range(30):
        mutation = OPERATORS.get(operator).apply("priority.py", KEYED, random.Random(seed))
        assert mutation is not None
        made.add(mutation.new_text)
        namespace: dict[str, Any] = {}
        exec(compile(mutation.new_text, "priority.py", "exec"), namespace)
        keyed = namespace["priority"](30.0, list(BINS))
        assert sorted(keyed) == list(range(len(BINS))), mutation.new_text
        assert all(isinstance(v, int | float) for v in keyed.values()), mutation.new_text
        assert "{i: " in mutation.new_text, mutation.new_text
    assert len(made) >= 5


MAPPED = "def priority(item, bins):\n    return list(map(lambda b: -(b - item), bins))\n"


@pytest.mark.parametrize("operator", ["py.guard", "py.add_term", "py.wrap", "py.combine"])
def test_map_of_a_lambda_is_edited_in_the_lambdas_body(operator: str) -> None:
    """Before, the list was the value: 40 guards, 40 terms, 24 wraps and 40 combinations of 40 raised."""
    (site,) = return_sites(Source(MAPPED, ast.parse(MAPPED)))
    assert ast.unparse(site.value) == "-(b - item)" and site.names == ["item", "b"]
    for text in edits_keeping_one_number_per_element(operator, MAPPED):
        assert "list(map(lambda b: " in text and text.endswith(", bins))\n"), text
