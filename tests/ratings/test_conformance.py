"""Every registered rating backend passes the rating backend suite
(:func:`assay.testing.ratings.check_rating_backend`), built by name through the resolver; then what is not
the suite's: Bradley-Terry's order independence, and the outcomes every backend refuses."""

from __future__ import annotations

import pytest

from assay.extensions import RATING_BACKEND, resolve
from assay.ratings import RATINGS, EloRating, MatchOutcome, make_rating
from assay.testing.ratings import check_rating_backend, mixed_outcomes

BACKENDS = RATINGS.names()


@pytest.mark.parametrize("name", BACKENDS)
def test_registered_backend_conforms(name: str) -> None:
    check_rating_backend(lambda: resolve(RATING_BACKEND, name))


def test_registry_lists_all_four_backends() -> None:
    assert BACKENDS == ["bradley_terry", "elo", "glicko2", "weng_lin"]
    for name in BACKENDS:
        assert RATINGS.get(name).name == name


class Miscounts(EloRating):
    """Counts a tie as a win for both sides."""

    def update(self, outcomes: list[MatchOutcome]) -> None:  # type: ignore[override]
        super().update([MatchOutcome(o.a, o.b, o.winner or o.a, o.category) for o in outcomes])


def test_the_suite_names_what_a_broken_backend_breaks() -> None:
    with pytest.raises(
        AssertionError, match=r"rating backend Miscounts \(ties are symmetric\): after ties only"
    ):
        check_rating_backend(Miscounts)


def test_bradley_terry_is_order_independent() -> None:
    outcomes = mixed_outcomes()
    forward, backward = make_rating("bradley_terry"), make_rating("bradley_terry")
    forward.update(outcomes)
    for outcome in reversed(outcomes):
        backward.update([outcome])
    for name, r in forward.ratings().items():
        assert backward.rating(name).rating == pytest.approx(r.rating, abs=1e-6)
        assert backward.rating(name).uncertainty == pytest.approx(r.uncertainty, abs=1e-6)


@pytest.mark.parametrize(
    ("a", "b", "winner", "weight", "message"),
    [
        ("p", "p", "p", 1.0, "the same"),
        ("p", "q", "r", 1.0, "neither"),
        ("p", "q", "p", 0.0, "positive"),
        ("", "q", None, 1.0, "non-empty"),
    ],
)
def test_invalid_outcomes_are_refused(
    a: str, b: str, winner: str | None, weight: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        MatchOutcome(a, b, winner, weight=weight)
