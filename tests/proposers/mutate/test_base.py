"""Number perturbation and one-line shortening."""

from __future__ import annotations

import random

from assay.proposers.mutate.base import perturb_number, shorten


def test_perturbation_never_returns_the_same_number() -> None:
    rng = random.Random(0)
    for value in (0, 1, -3, 12, 0.0, 0.5, -2.25, 1e-9, 1e12):
        for _ in range(50):
            assert perturb_number(value, rng) != value


def test_ints_stay_ints_and_floats_are_scaled_by_small_factors() -> None:
    rng = random.Random(1)
    ints = {perturb_number(3, rng) for _ in range(200)}
    assert ints == {2, 4, -3}
    big = {perturb_number(40, rng) for _ in range(200)}
    assert big == {39, 41, 80, 20, -40}
    floats = {perturb_number(0.5, rng) for _ in range(200)}
    assert floats == {0.25, 0.4, 0.45, 0.55, 0.625, 1.0, -0.5}


def test_shorten_flattens_and_cuts() -> None:
    assert shorten("a\n  b") == "a b"
    assert shorten("x" * 60, 10) == "x" * 9 + "…"
