"""The rating backend suite: :func:`check_rating_backend`, which every registered backend passes and a backend
of one's own can run. Each part rates on a fresh backend."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from assay.protocols import RatingBackendProtocol
from assay.ratings import RATING_BACKEND, MatchOutcome, Rating, confidence
from assay.testing._expect import close, conformed, expect

UNSEEN = "never-seen"


def mixed_outcomes(seed: int = 7) -> list[MatchOutcome]:
    """Forty comparisons among ann, bob, cat and dan: random winners and ties, some in categories."""
    rng = random.Random(seed)
    names = ["ann", "bob", "cat", "dan"]
    outcomes = []
    for _ in range(40):
        a, b = rng.sample(names, 2)
        winner = rng.choice([a, b, None])
        outcomes.append(MatchOutcome(a, b, winner, category=rng.choice(["x", "y", None])))
    return outcomes


def _board(backend: Any) -> list[Rating]:
    """The leaderboard (best first), from ``leaderboard()`` where the backend has one."""
    if hasattr(backend, "leaderboard"):
        board: list[Rating] = backend.leaderboard()
        return board
    return sorted(backend.ratings().values(), key=lambda r: (-r.rating, r.name))


def _start(backend: Any) -> tuple[float, float]:
    """The start rating and uncertainty: the backend's ``start_rating`` and ``start_uncertainty`` where it
    declares them, else the standing of a name never seen."""
    unseen = backend.rating(UNSEEN)
    return getattr(backend, "start_rating", unseen.rating), getattr(
        backend, "start_uncertainty", unseen.uncertainty
    )


def stronger_ends_first(backend: Any, who: str) -> None:
    outcomes = []
    for _ in range(15):
        outcomes += [MatchOutcome("strong", "mid", "strong"), MatchOutcome("mid", "weak", "mid")]
        outcomes += [MatchOutcome("weak", "strong", "strong")]
    for first in range(0, len(outcomes), 9):
        backend.update(outcomes[first : first + 9])
    board = _board(backend)
    expect(
        [r.name for r in board] == ["strong", "mid", "weak"], f"{who}: the order is {[r.name for r in board]}"
    )
    p = backend.win_probability("strong", "weak")
    expect(p > 0.8, f"{who}: strong beats weak with probability {p:.3f}, not above 0.8")
    start = _start(backend)[0]
    expect(
        board[0].rating > start > board[-1].rating,
        f"{who}: the start rating {start} is not between the best's {board[0].rating} and the worst's"
        f" {board[-1].rating}",
    )


def probabilities_sum_to_one(backend: Any, who: str) -> None:
    backend.update(mixed_outcomes())
    for a, b in [("ann", "bob"), ("cat", "dan"), ("ann", "nobody"), ("x1", "x2")]:
        ab, ba = backend.win_probability(a, b), backend.win_probability(b, a)
        expect(close(ab + ba, 1.0, abs=1e-9), f"{who}: p({a}, {b}) + p({b}, {a}) = {ab + ba}, not 1")
        expect(0.0 < ab < 1.0, f"{who}: p({a}, {b}) = {ab}, not strictly between 0 and 1")


def ties_are_symmetric(backend: Any, who: str) -> None:
    backend.update([MatchOutcome("p", "q", None)] * 3)
    p, q = backend.rating("p"), backend.rating("q")
    expect(
        close(p.rating, q.rating, abs=1e-9) and close(p.uncertainty, q.uncertainty, abs=1e-9),
        f"{who}: after ties only, p is {p.rating} ± {p.uncertainty} and q {q.rating} ± {q.uncertainty}",
    )
    pq = backend.win_probability("p", "q")
    expect(close(pq, 0.5, abs=1e-9), f"{who}: after ties only, p beats q with probability {pq}, not 0.5")
    expect(
        (p.ties, p.wins, p.losses) == (3, 0, 0), f"{who}: three ties counted as {p.ties, p.wins, p.losses}"
    )


def counts_are_exact(backend: Any, who: str) -> None:
    outcomes = mixed_outcomes()
    backend.update(outcomes[:25])
    backend.update(outcomes[25:])
    ratings = backend.ratings()
    expect(
        set(ratings) == {"ann", "bob", "cat", "dan"}, f"{who}: rates {sorted(ratings)}, not the four players"
    )
    for name, r in ratings.items():
        mine = [o for o in outcomes if name in (o.a, o.b)]
        wins = sum(o.winner == name for o in mine)
        ties = sum(o.winner is None for o in mine)
        expected = (wins, len(mine) - wins - ties, ties, len(mine))
        got = (r.wins, r.losses, r.ties, r.comparisons)
        expect(got == expected, f"{who}: {name}'s wins, losses, ties, comparisons are {got}, not {expected}")
    wins, losses = sum(r.wins for r in ratings.values()), sum(r.losses for r in ratings.values())
    expect(wins == losses, f"{who}: {wins} wins but {losses} losses in all")


def unknown_name_has_the_start_rating(backend: Any, who: str) -> None:
    start, uncertainty = _start(backend)
    backend.update(mixed_outcomes())
    unknown = backend.rating(UNSEEN)
    expect(
        (unknown.rating, unknown.uncertainty) == (start, uncertainty),
        f"{who}: a name never seen is rated {unknown.rating} ± {unknown.uncertainty}, not the start rating"
        f" {start} ± {uncertainty}",
    )
    expect(
        unknown.comparisons == 0 and close(unknown.confidence, confidence(0)),
        f"{who}: a name never seen has {unknown.comparisons} comparisons and confidence {unknown.confidence}",
    )
    expect(UNSEEN not in backend.ratings(), f"{who}: asking for a name's rating made it rated")


def evidence_lowers_uncertainty(backend: Any, who: str) -> None:
    start = _start(backend)[1]
    backend.update([MatchOutcome("p", "q", "p"), MatchOutcome("q", "p", "q")] * 6)
    p = backend.rating("p")
    expect(
        p.uncertainty < start,
        f"{who}: 12 comparisons left p's uncertainty at {p.uncertainty} (start {start})",
    )
    expect(p.comparisons == 12, f"{who}: 12 comparisons counted as {p.comparisons}")
    expect(
        close(p.confidence, confidence(12)),
        f"{who}: the confidence after 12 comparisons is {p.confidence}, not {confidence(12)}",
    )


def leaderboard_is_sorted(backend: Any, who: str) -> None:
    backend.update(mixed_outcomes())
    board = _board(backend)
    ratings = [r.rating for r in board]
    expect(ratings == sorted(ratings, reverse=True), f"{who}: the leaderboard is not best first: {ratings}")
    expect(len(board) == 4, f"{who}: the leaderboard has {len(board)} names, not 4")


def empty_batch_changes_nothing(backend: Any, who: str) -> None:
    backend.update([])
    expect(backend.ratings() == {}, f"{who}: an empty batch rated {sorted(backend.ratings())}")
    expect(_board(backend) == [], f"{who}: an empty batch filled the leaderboard")


PARTS: list[tuple[str, Callable[[Any, str], None]]] = [
    ("a clearly stronger player ends first", stronger_ends_first),
    ("win probabilities of a pair sum to one", probabilities_sum_to_one),
    ("ties are symmetric", ties_are_symmetric),
    ("wins, losses and ties are counted exactly", counts_are_exact),
    ("a name never seen has the start rating", unknown_name_has_the_start_rating),
    ("evidence lowers uncertainty and raises confidence", evidence_lowers_uncertainty),
    ("outcomes with categories rate, and the leaderboard is sorted", leaderboard_is_sorted),
    ("an empty batch changes nothing", empty_batch_changes_nothing),
]


def check_rating_backend(make: Callable[[], object]) -> None:
    """The rating backend contract, each part on a fresh backend ``make()`` builds: a clearly stronger player
    ends first (and above the start rating, the weakest below it); ``p(a, b) + p(b, a) == 1``, strictly between
    0 and 1, for names seen or not; ties rate both sides alike; wins, losses, ties and comparisons are counted
    exactly over batches; a name never seen has the start rating and uncertainty (``start_rating`` and
    ``start_uncertainty`` where the backend declares them), no comparisons and is not rated by being asked
    for; evidence lowers uncertainty and the confidence is :func:`assay.ratings.confidence` of the count;
    outcomes with categories rate, and the leaderboard (``leaderboard()``, where it has one) is best first; an
    empty batch changes nothing.

    Plain function. Raises AssertionError naming the part of the contract that failed."""
    for part, run in PARTS:
        raw = make()
        who = f"rating backend {type(raw).__name__} ({part})"
        expect(
            isinstance(raw, RatingBackendProtocol), f"{who}: lacks update, rating, ratings or win_probability"
        )
        run(conformed(RATING_BACKEND, raw, who), who)
