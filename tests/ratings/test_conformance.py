"""One suite every rating backend must pass."""

from __future__ import annotations

import random

import pytest

from assay.ratings import RATINGS, MatchOutcome, RatingBackend, make_rating

BACKENDS = RATINGS.names()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> RatingBackend:
    return make_rating(request.param)


def mixed_outcomes(seed: int = 7) -> list[MatchOutcome]:
    rng = random.Random(seed)
    names = ["ann", "bob", "cat", "dan"]
    outcomes = []
    for _ in range(40):
        a, b = rng.sample(names, 2)
        winner = rng.choice([a, b, None])
        outcomes.append(MatchOutcome(a, b, winner, category=rng.choice(["x", "y", None])))
    return outcomes


def test_registry_lists_all_four_backends():
    assert BACKENDS == ["bradley_terry", "elo", "glicko2", "weng_lin"]
    for name in BACKENDS:
        assert RATINGS.get(name).name == name


def test_clearly_stronger_player_ends_first(backend):
    outcomes = []
    for _ in range(15):
        outcomes += [MatchOutcome("strong", "mid", "strong"), MatchOutcome("mid", "weak", "mid")]
        outcomes += [MatchOutcome("weak", "strong", "strong")]
    for start in range(0, len(outcomes), 9):
        backend.update(outcomes[start : start + 9])
    board = backend.leaderboard()
    assert [r.name for r in board] == ["strong", "mid", "weak"]
    assert backend.win_probability("strong", "weak") > 0.8
    assert board[0].rating > backend.start_rating > board[-1].rating


def test_win_probabilities_sum_to_one(backend):
    backend.update(mixed_outcomes())
    for a, b in [("ann", "bob"), ("cat", "dan"), ("ann", "nobody"), ("x1", "x2")]:
        total = backend.win_probability(a, b) + backend.win_probability(b, a)
        assert total == pytest.approx(1.0, abs=1e-9)
        assert 0.0 < backend.win_probability(a, b) < 1.0


def test_ties_are_symmetric(backend):
    backend.update([MatchOutcome("p", "q", None)] * 3)
    p, q = backend.rating("p"), backend.rating("q")
    assert p.rating == pytest.approx(q.rating, abs=1e-9)
    assert p.uncertainty == pytest.approx(q.uncertainty, abs=1e-9)
    assert backend.win_probability("p", "q") == pytest.approx(0.5, abs=1e-9)
    assert (p.ties, p.wins, p.losses) == (3, 0, 0)


def test_counts_are_exact(backend):
    outcomes = mixed_outcomes()
    backend.update(outcomes[:25])
    backend.update(outcomes[25:])
    ratings = backend.ratings()
    assert set(ratings) == {"ann", "bob", "cat", "dan"}
    for name, r in ratings.items():
        mine = [o for o in outcomes if name in (o.a, o.b)]
        assert r.wins == sum(o.winner == name for o in mine)
        assert r.ties == sum(o.winner is None for o in mine)
        assert r.losses == len(mine) - r.wins - r.ties
        assert r.comparisons == len(mine)
    assert sum(r.wins for r in ratings.values()) == sum(r.losses for r in ratings.values())


def test_unknown_name_has_the_start_rating(backend):
    backend.update(mixed_outcomes())
    unknown = backend.rating("never-seen")
    assert unknown.rating == backend.start_rating
    assert unknown.uncertainty == backend.start_uncertainty
    assert (unknown.comparisons, unknown.confidence) == (0, pytest.approx(1 / (1 + 2.718281828459045)))
    assert "never-seen" not in backend.ratings()


def test_evidence_lowers_uncertainty_and_raises_confidence(backend):
    backend.update([MatchOutcome("p", "q", "p"), MatchOutcome("q", "p", "q")] * 6)
    p = backend.rating("p")
    assert p.uncertainty < backend.start_uncertainty
    assert p.comparisons == 12
    assert p.confidence == pytest.approx(1 / (1 + 2.718281828459045 ** (-1.4)))


def test_categories_do_not_crash_and_leaderboard_is_sorted(backend):
    backend.update(mixed_outcomes())
    board = backend.leaderboard()
    assert [r.rating for r in board] == sorted((r.rating for r in board), reverse=True)
    assert len(board) == 4


def test_empty_batch_changes_nothing(backend):
    backend.update([])
    assert backend.ratings() == {}
    assert backend.leaderboard() == []


def test_bradley_terry_is_order_independent():
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
def test_invalid_outcomes_are_refused(a, b, winner, weight, message):
    with pytest.raises(ValueError, match=message):
        MatchOutcome(a, b, winner, weight=weight)
