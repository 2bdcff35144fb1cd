"""Which incumbents a new candidate is judged against. Incumbents are ``(id, strength estimate)`` pairs."""

from __future__ import annotations


def top_k(incumbents: list[tuple[str, float]], k: int = 10) -> list[str]:
    """The ids of the ``k`` incumbents with the highest estimates, best first (ties keep list order)."""
    if k <= 0:
        return []
    ranked = sorted(incumbents, key=lambda item: item[1], reverse=True)
    return [incumbent_id for incumbent_id, _ in ranked[:k]]


def adaptive_next(estimate: float, incumbents: list[tuple[str, float]], asked: set[str]) -> str | None:
    """The next opponent for binary insertion: the not-yet-asked incumbent whose estimate is closest to
    the new candidate's current ``estimate`` (ties: the stronger one). None when all were asked.

    The caller narrows ``estimate`` after each comparison (e.g. to the middle of the interval still
    possible), so the questions home in on the candidate's place like a binary search.
    """
    best_id: str | None = None
    best_key: tuple[float, float] | None = None
    for incumbent_id, strength in incumbents:
        if incumbent_id in asked:
            continue
        key = (abs(strength - estimate), -strength)
        if best_key is None or key < best_key:
            best_id, best_key = incumbent_id, key
    return best_id
