"""The score chart's axis fits the scores: a small gain is a visible rise."""

from __future__ import annotations

import pytest

from assay.report.svg import HEIGHT, PAD_B, PAD_T, Scale, score_range


def test_a_small_gain_is_a_visible_rise() -> None:
    lo, hi = score_range([0.957, 0.961, 0.974])
    assert lo == pytest.approx(0.947) and hi == pytest.approx(0.984)
    y = Scale(lo, hi, HEIGHT - PAD_B, PAD_T)
    assert y(0.957) - y(0.974) > (HEIGHT - PAD_B - PAD_T) / 3  # pixels grow downwards
    fixed = Scale(0.0, 1.0, HEIGHT - PAD_B, PAD_T)
    assert fixed(0.957) - fixed(0.974) < 5  # the old 0-1 axis: a flat line


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([], (0.0, 1.0)),
        ([0.0, 1.0], (0.0, 1.0)),  # the margin never leaves [0, 1] for scores within it
        ([0.5], (0.49, 0.51)),  # one score: a margin of 0.01 each side
        ([-2.0, 3.0], (-2.5, 3.5)),  # scores outside [0, 1] (a custom scale) are not clamped
    ],
)
def test_the_range(scores: list[float], expected: tuple[float, float]) -> None:
    assert score_range(scores) == pytest.approx(expected)
