"""The tuning search space: ranges from magnitudes, overrides from evolve.parameters, one study per structure."""

from __future__ import annotations

import pytest
from optuna.distributions import BaseDistribution, FloatDistribution, IntDistribution

from assay.config import ParameterSpec
from assay.proposers.tune import search_space
from assay.proposers.tune.space import default_range


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (5, (0, 20, False)),
        (-3, (-12, 0, False)),
        (0, (-10, 10, False)),
        (500, (50, 5000, True)),
        (0.5, (0.005, 50.0, True)),
        (-2.0, (-20.0, -0.2, False)),
        (0.0, (-1.0, 1.0, False)),
    ],
)
def test_default_ranges_keep_the_sign_and_span_the_magnitude(
    value: float, expected: tuple[float, float, bool]
) -> None:
    low, high, log = default_range(value)
    assert (low, high, log) == pytest.approx(expected)
    assert low <= value <= high


def test_ints_and_floats_get_their_distributions() -> None:
    space = search_space({"p.json": '{"n": 5, "rate": 0.5}'})
    dists = space.distributions()
    assert dists["p.json:n"] == IntDistribution(0, 20)
    assert dists["p.json:rate"] == FloatDistribution(0.005, 50.0, log=True)


def test_overrides_bound_pin_exclude_and_include_by_name_or_glob() -> None:
    files = {"p.json": '{"n": 5, "rate": 0.5, "seed": 3, "other": 2}', "f.py": "K = 3\n"}
    specs = {
        "p.json:n": ParameterSpec(low=10, high=30),
        "p.json:rate": ParameterSpec(value=0.25),
        "p.json:seed": ParameterSpec(low=0, high=9),
        "f.py:*": ParameterSpec(exclude=True),
    }
    space = search_space(files, specs)
    tuned = {p.name: (p.low, p.high) for p in space.parameters}
    assert tuned == {"p.json:n": (10, 30), "p.json:other": (0, 10), "p.json:seed": (0, 9)}
    assert [(s.name, v) for s, v in space.pinned] == [("p.json:rate", 0.25)]
    assert [s.name for s in space.excluded] == ["f.py:K"]
    by_default = search_space(files)
    assert "p.json:seed" in [s.name for s in by_default.excluded]


def test_a_study_is_a_structure_values_do_not_change_it() -> None:
    a = search_space({"f.py": "def f(x):\n    return 0.5 * x + 3\n"})
    b = search_space({"f.py": "def f(x):\n    # tuned\n    return 0.75 * x + 9\n"})
    c = search_space({"f.py": "def f(x):\n    return 0.5 * x - 3\n"})
    assert a.study == b.study != c.study
    assert b.point().values == {"f.py:f#1": 0.75, "f.py:f#2": 9.0}


def test_a_bad_override_is_refused() -> None:
    with pytest.raises(ValueError, match="below"):
        ParameterSpec(low=5, high=1)


def test_around_narrows_each_range_to_near_the_value_within_its_own_range() -> None:
    space = search_space({"p.json": '{"c": 32, "k": 8, "n": 1, "rate": 0.5, "big": 500, "neg": -2.0}'})
    near = space.around()
    dists = near.distributions()
    assert dists["p.json:c"] == IntDistribution(22, 42)  # 30% either side
    assert dists["p.json:k"] == IntDistribution(6, 10)  # at least 2 either side
    assert dists["p.json:n"] == IntDistribution(0, 3)  # clipped to its own range, 0 to 10
    assert dists["p.json:rate"] == FloatDistribution(0.25, 1.0, log=True)  # a factor of 2
    assert dists["p.json:big"] == IntDistribution(250, 1000, log=True)
    neg = dists["p.json:neg"]  # linear, -20 to -0.2: 15% of that range below, clipped above
    assert isinstance(neg, FloatDistribution) and not neg.log
    assert (neg.low, neg.high) == pytest.approx((-2.0 - 0.15 * 19.8, -0.2))
    assert near.study == space.study
    assert [p.site for p in near.parameters] == [p.site for p in space.parameters]


def priority_ranges(*body: str) -> dict[str, BaseDistribution]:
    """The distributions of ``priority(item, remaining, low)`` written with ``body``'s lines, then a return."""
    lines = ["def priority(item, remaining, low):", *(f"    {line}" for line in body), "    return 0"]
    return search_space({"p.py": "\n".join(lines) + "\n"}).distributions()


def test_a_float_band_is_placed_on_a_linear_range_up_to_four_times_its_far_end() -> None:
    dists = priority_ranges(
        "if 0.0 < remaining - item - 0.1 < 4.9:",
        "    return -(remaining - item) - 1000.0",
        "if abs(remaining - 6.0) < 2.5:",
        "    return 0.5 * item",
    )
    # A start of 0.1 on a log scale from 0.001 to 10 spends most trials where the band starts at 0; from 0 to 20
    # on a linear one, it reaches a start of 5 as readily as one of 0.5.
    assert dists["p.py:priority#1"] == FloatDistribution(0.0, 20.0)
    assert dists["p.py:priority#2"] == FloatDistribution(0.0, 20.0)
    assert dists["p.py:priority#4"] == FloatDistribution(
        0.0, 34.0
    )  # the elementwise form: centre 6, half 2.5
    assert dists["p.py:priority#5"] == FloatDistribution(0.0, 34.0)
    # Every other float keeps its log scale: the override, a factor.
    assert dists["p.py:priority#3"] == FloatDistribution(10.0, 100000.0, log=True)
    assert dists["p.py:priority#6"] == FloatDistribution(0.005, 50.0, log=True)


def test_an_int_band_and_a_band_of_names_keep_their_ranges() -> None:
    dists = priority_ranges(
        "if 0 < remaining - item - 5 < 45:",
        "    return -1",
        "if 0 < remaining - low < 2.5:",
        "    return -2",
    )
    assert dists["p.py:priority#1"] == IntDistribution(0, 20)
    assert dists["p.py:priority#2"] == IntDistribution(0, 180)
    assert dists["p.py:priority#4"] == FloatDistribution(0.025, 250.0, log=True)  # no start to place it by
