"""Which incumbents a new candidate is judged against. Incumbents are ``(id, strength estimate)`` pairs."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


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


class NoisyBisection:
    """Probabilistic bisection (Horstein's rule) of one newcomer among incumbents for a judge right with
    probability ``accuracy``, the information-greedy version of ``adaptive_next``.

    The newcomer's place is a distribution over the ``n + 1`` slots between the incumbents sorted by estimate
    (uniform at first). ``next`` asks the incumbent whose chance of losing to the newcomer, under that
    distribution, is closest to 0.5: the question whose answer carries the most information, since the
    judge's own noise is the same for every question. ``observe`` multiplies the slots by the likelihood of the
    answer, so a contradicting answer only shifts weight instead of reopening a side, and the same incumbent
    may be asked again. With ``uncertainty`` (standard errors on the estimates' scale), an incumbent is below
    slot ``s`` with probability ``Φ((boundary_s − estimate) / error)`` rather than for certain, so answers
    against a poorly known incumbent move the newcomer less.
    """

    def __init__(
        self,
        incumbents: list[tuple[str, float]],
        accuracy: float = 0.8,
        uncertainty: Mapping[str, float] | None = None,
    ) -> None:
        from scipy.special import ndtr  # ~0.5 s to import: only when a bisection is built

        if not 0.5 < accuracy < 1.0:
            raise ValueError(f"accuracy must be in (0.5, 1), got {accuracy!r}")
        self.accuracy = accuracy
        self._ids = [incumbent_id for incumbent_id, _ in incumbents]
        values = np.array([value for _, value in incumbents], dtype=float)
        self._values = values
        ordered = np.sort(values)
        bounds = np.concatenate([[-np.inf], (ordered[:-1] + ordered[1:]) / 2, [np.inf]])
        errors = np.array([(uncertainty or {}).get(i, 0.0) for i in self._ids], dtype=float)
        gap = (bounds[None, :] - values[:, None]) / np.maximum(errors, 1e-12)[:, None]
        below = np.where(errors[:, None] > 0, ndtr(gap), (gap > 0).astype(float))
        self._win = accuracy * below + (1.0 - accuracy) * (1.0 - below)  # P(newcomer wins | slot)
        self._slots = np.full(len(self._ids) + 1, 1.0 / (len(self._ids) + 1))

    def next(self) -> str | None:
        """The most informative opponent now (ties: the stronger), or None without incumbents."""
        if not self._ids:
            return None
        distance = np.abs(self._win @ self._slots - 0.5)
        tied = np.flatnonzero(distance <= distance.min() + 1e-12)
        return self._ids[int(tied[np.argmax(self._values[tied])])]

    def observe(self, opponent: str, newcomer_won: bool) -> None:
        """Update the newcomer's slot distribution with one answer against ``opponent``."""
        row = self._win[self._ids.index(opponent)]
        posterior = self._slots * (row if newcomer_won else 1.0 - row)
        self._slots = posterior / posterior.sum()

    def slots(self) -> list[float]:
        """The probability of each slot, from below the weakest incumbent to above the strongest."""
        return self._slots.tolist()


def boundary_pairs(
    incumbents: list[tuple[str, float]],
    uncertainty: Mapping[str, float],
    top: int = 5,
    count: int = 1,
    draws: int = 256,
    seed: int = 0,
) -> list[tuple[str, str]]:
    """Up to ``count`` distinct pairs of incumbents whose comparison best settles who is in the top ``top``.

    Strengths are drawn from independent normals (estimate, standard error). A pair scores
    ``q(1 − q) · (m_a(1 − m_a) + m_b(1 − m_b))``: ``q`` the chance that ``a`` is above ``b`` (an even
    pair is the most informative question) and ``m`` each one's chance of being in the top (only doubtful
    members matter). Spending part of each newcomer's budget on such pairs resolves the top of the ranking,
    which insertion alone leaves as blurred as the middle. Pairs whose score is 0 are never returned.
    """
    if len(incumbents) < 2 or count <= 0:
        return []
    ids = [incumbent_id for incumbent_id, _ in incumbents]
    values = np.array([value for _, value in incumbents], dtype=float)
    errors = np.array([uncertainty.get(i, 0.0) for i in ids], dtype=float)
    sample = values + errors * np.random.default_rng(seed).standard_normal((draws, len(ids)))
    place = np.argsort(np.argsort(-sample, axis=1, kind="stable"), axis=1)
    member = (place < top).mean(axis=0)
    above = (sample[:, :, None] > sample[:, None, :]).mean(axis=0)
    doubt = member * (1.0 - member)
    score = np.triu(above * (1.0 - above) * (doubt[:, None] + doubt[None, :]), k=1)
    pairs: list[tuple[str, str]] = []
    for flat in np.argsort(-score, axis=None, kind="stable")[:count]:
        a, b = np.unravel_index(flat, score.shape)
        if score[a, b] > 0:
            pairs.append((ids[a], ids[b]))
    return pairs
