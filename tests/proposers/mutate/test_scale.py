"""New constants at the scale of the numbers the dev cases carry: fractions, or values in the thousands, move the
growing operators' palettes; numbers within the palettes' own span leave them as they are."""

from __future__ import annotations

import ast
import math
import random

import pytest

from assay.proposers.mutate import OPERATORS, scale
from assay.proposers.mutate.scale import constants_at, current_scale, data_scale, scaled

BEST_FIT = "def priority(item: float, remaining: float) -> float:\n    return -(remaining - item)\n"


def test_the_scale_is_the_median_size_of_the_numbers_the_cases_carry() -> None:
    cases = [{"capacity": 1.0, "items": [0.2, 0.4, 0.6]}, {"capacity": 1.0, "items": [[0.3], {"x": -0.5}]}]
    assert data_scale(cases) == pytest.approx(0.5)  # of 1, 1, 0.2, 0.3, 0.4, 0.5, 0.6
    assert data_scale([{"items": [2000, 6000, 10000], "capacity": 15000}]) == 8000


@pytest.mark.parametrize(
    "cases",
    [
        [{"items": [20, 60, 100], "capacity": 150}],  # the palettes' own span
        [{"text": "a complaint", "label": "yes"}],  # no numbers
        [],
        [{"on": True, "off": False, "none": None}],  # booleans are no numbers
        [{"zeros": [0, 0.0], "n": 5}],  # zeros say nothing of a scale
    ],
)
def test_numbers_within_the_palettes_own_span_or_none_leave_them_as_they_are(cases: list[dict]) -> None:
    assert data_scale(cases) is None


def test_a_seed_an_id_or_an_index_says_nothing_of_the_datas_scale() -> None:
    """Cases that carry only the seed of a generated instance (``{"seed": 7003}``) used to move every palette to
    the thousands: ``if 0 < item - 120 < 1080`` among items of 20 to 100 (seeds 3000 to 3007)."""
    assert data_scale([{"seed": 7000 + i} for i in range(5)]) is None
    assert data_scale([{"seed": 7000, "items": [0.2, 0.3]}]) == 0.25
    assert (
        data_scale([{"instance": {"job_id": 90210, "run_seeds": [5000, 6000], "sizes": [2000, 5000]}}])
        == 3500
    )
    assert data_scale([{"n": 7000}]) == 7000  # a count is the data's own


def test_infinities_nan_and_ints_too_large_for_a_float_are_left_out() -> None:
    assert data_scale([{"a": [math.inf, math.nan, 10**400, 0.25]}]) == 0.25


def test_a_palette_moves_by_the_ratio_rounded_to_two_digits() -> None:
    assert scaled((0.1, 0.5, 2.0, 20.0), 0.04, whole=False) == (0.004, 0.02, 0.08, 0.8)
    assert scaled((2, 5, 10, 100), 116, whole=True) == (230, 580, 1200, 12000)


def test_the_scale_holds_within_the_block_only() -> None:
    assert current_scale() is None
    with constants_at(0.4):
        assert current_scale() == 0.4
        with constants_at(None):
            assert current_scale() is None
        assert current_scale() == 0.4
    assert current_scale() is None


def band(source: str, seed: int) -> tuple[object, object, object] | None:
    """A guard's band on ``remaining - item``: its start, its width and the returned value's shift, or None."""
    mutation = OPERATORS.get("py.guard").apply("f.py", source, random.Random(seed))
    assert mutation is not None
    branch = next(s for s in ast.parse(mutation.new_text).body[-1].body if isinstance(s, ast.If))  # type: ignore[attr-defined]
    test = branch.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 2):
        return None
    if ast.unparse(test.comparators[0].left) != "remaining - item":  # type: ignore[attr-defined]
        return None
    value = branch.body[0].value  # type: ignore[attr-defined]
    shift = value.right.value if isinstance(value.right, ast.Constant) else None
    return test.comparators[0].right.value, test.comparators[1].value, shift  # type: ignore[attr-defined]


def test_among_fractions_a_band_is_drawn_at_their_scale_and_of_floats() -> None:
    with constants_at(0.4):
        bands = [b for seed in range(120) if (b := band(BEST_FIT, seed)) is not None]
    assert len(bands) > 40
    for start, width, _ in bands:
        assert type(start) is float and type(width) is float  # never a whole number among fractions
        assert 0 < start < 0.1 and 0 < width < 1  # inside a bin of 1.0, where a band splits something
    # The fixed palettes' bands on the same function: wider than any value a fraction's difference takes.
    plain = [b for seed in range(120) if (b := band(BEST_FIT, seed)) is not None]
    assert min(float(width) for _, width, _ in plain) >= 3  # type: ignore[arg-type]


def test_among_thousands_bands_and_overrides_are_drawn_as_large() -> None:
    with constants_at(6000.0):
        bands = [b for seed in range(120) if (b := band(BEST_FIT, seed)) is not None]
    assert len(bands) > 40
    assert {type(start) for start, _, _ in bands} == {int, float}  # ints three times in four, as before
    for start, width, _ in bands:
        assert start >= 60 and width >= 1200  # type: ignore[operator]
    shifts = {shift for _, _, shift in bands}
    assert 120000 in shifts  # an override as much larger than 1000 as the numbers are than the palette's own
    assert 1000 not in shifts


def test_the_scale_is_judged_from_at_most_so_many_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scale, "MAX_NUMBERS", 3)
    # Cases read in order: the first three numbers are fractions, the thousands after them are not read.
    assert data_scale([{"a": [0.2, 0.3]}, {"b": 0.4}, {"c": [5000] * 10}]) == pytest.approx(0.3)


@pytest.mark.parametrize(("size", "scale"), [(1e300, 1e12), (1e-300, 1e-12)])
def test_a_scale_is_taken_no_farther_out_than_a_float_can_follow(size: float, scale: float) -> None:
    assert data_scale([{"a": [size, size]}]) == scale
    with constants_at(scale):
        for seed in range(40):  # every operator's constants stay finite, whatever the palette
            mutation = OPERATORS.get("py.guard").apply("f.py", BEST_FIT, random.Random(seed))
            assert mutation is not None and "inf" not in mutation.new_text
            ast.parse(mutation.new_text)
