"""The mutation operator suite: every built-in operator passes it, and it fails an operator that breaks each
part of the contract."""

from __future__ import annotations

import random

import pytest

from assay.proposers.mutate import Mutation, fewshot
from assay.proposers.mutate.base import Operator
from assay.proposers.mutate.engine import OPERATORS
from assay.testing.operators import SPELLINGS, check_operator

BUILT_IN = [n for n in OPERATORS.names() if not isinstance(OPERATORS.get(n), fewshot.PoolOperator)]


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_built_in_operator_passes_the_suite(name: str) -> None:
    check_operator(OPERATORS.get(name))


def _operator(edit: object) -> Operator:
    return Operator("my.op", "python", 1, edit)  # type: ignore[arg-type]


def _first_number(path: str, text: str, rng: random.Random) -> Mutation | None:
    new = text.replace("10", str(rng.randrange(11, 99)), 1)
    return Mutation(path, new, "a number", "my.op", (f"{path}:number",)) if new != text else None


def test_it_fails_an_operator_that_leaves_a_file_that_does_not_parse() -> None:
    def broken(path: str, text: str, rng: random.Random) -> Mutation:
        return Mutation(path, text + "\ndef (:\n", "broke it", "my.op", (f"{path}:x",))

    with pytest.raises(AssertionError, match="does not parse"):
        check_operator(_operator(broken))


def test_it_fails_an_operator_that_another_draw_of_the_same_seed_changes() -> None:
    draws = iter(range(11, 10_000))

    def restless(path: str, text: str, rng: random.Random) -> Mutation:
        return Mutation(path, text.replace("10", str(next(draws)), 1), "a number", "my.op", (f"{path}:n",))

    with pytest.raises(AssertionError, match="same seed"):
        check_operator(_operator(restless))


def test_it_fails_an_operator_that_names_no_site_or_another_operator() -> None:
    def unnamed(path: str, text: str, rng: random.Random) -> Mutation | None:
        made = _first_number(path, text, rng)
        return None if made is None else Mutation(path, made.new_text, "a number", "my.op")

    with pytest.raises(AssertionError, match="names no site"):
        check_operator(_operator(unnamed))

    def misnamed(path: str, text: str, rng: random.Random) -> Mutation | None:
        made = _first_number(path, text, rng)
        return None if made is None else Mutation(path, made.new_text, "a number", "py.constant", made.sites)

    with pytest.raises(AssertionError, match="names its operator"):
        check_operator(_operator(misnamed))


def test_it_fails_an_operator_written_for_one_spelling_or_that_raises() -> None:
    def one(path: str, text: str, rng: random.Random) -> Mutation | None:
        if path != "functions.py":
            return None
        return _first_number(path, text, rng)

    with pytest.raises(AssertionError, match="changed 1 of 3 spellings"):
        check_operator(_operator(one))

    def raises(path: str, text: str, rng: random.Random) -> Mutation:
        raise IndexError("list index out of range")

    with pytest.raises(AssertionError, match="raised IndexError"):
        check_operator(_operator(raises))


def test_an_operator_that_changes_numbers_passes() -> None:
    check_operator(_operator(_first_number))
    assert set(SPELLINGS) == {"python", "config", "text"}
