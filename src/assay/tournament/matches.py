"""A generation's matches: the candidate against the baseline (several rounds) and against each member of the
self-play pool, each match scored 0..1 for the candidate and turned into a rating ``MatchOutcome``."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from assay.ratings.base import MatchOutcome
from assay.tournament.judges import Contestant, PairVerdict, PairwiseJudge

MATCHES_PER_GENERATION = 3
WIN_THRESHOLD = 0.55
POOL_SIZE = 3
# Scores a hair under the threshold through float rounding (0.5 + (0.6 - 0.5) / 2) still count as reaching it.
_EPSILON = 1e-9


def clamp_score(a: float, b: float) -> float:
    """The self-play score of a side with mean ``a`` against one with mean ``b``: clamp(0.5 + (a − b)/2)."""
    return min(1.0, max(0.0, 0.5 + (a - b) / 2))


def effective_score(verdict: PairVerdict, candidate: str) -> float:
    """The candidate's 0..1 score in a match: from the two mean scores when the judge compared scores
    (``verdict.means`` is (candidate, opponent)), else 1 for a win, 0 for a loss, 0.5 for a tie."""
    if verdict.means is not None:
        return clamp_score(*verdict.means)
    if verdict.winner is None:
        return 0.5
    return 1.0 if verdict.winner == candidate else 0.0


def outcome_for(
    candidate: str, opponent: str, score: float, threshold: float = WIN_THRESHOLD
) -> MatchOutcome:
    """The rating outcome of a match: the candidate wins at ``score`` ≥ threshold, loses at ≤ 1 − threshold,
    and ties in between (so the ratings and the baseline win rule agree)."""
    if score >= threshold - _EPSILON:
        winner: str | None = candidate
    elif score <= 1 - threshold + _EPSILON:
        winner = opponent
    else:
        winner = None
    return MatchOutcome(candidate, opponent, winner)


@dataclass
class Match:
    """One match of the candidate against ``opponent``: the verdict, the candidate's score, and whether it
    reached the win threshold."""

    opponent: str
    kind: Literal["baseline", "pool"]
    verdict: PairVerdict
    score: float
    won: bool
    outcome: MatchOutcome


@dataclass
class GenerationMatches:
    """Every match of one candidate in one generation."""

    candidate: str
    matches: list[Match] = field(default_factory=list)

    @property
    def outcomes(self) -> list[MatchOutcome]:
        """The matches as outcomes for a rating backend, in play order (baseline first)."""
        return [m.outcome for m in self.matches]

    @property
    def verdicts(self) -> list[PairVerdict]:
        return [m.verdict for m in self.matches]

    @property
    def baseline_win_rate(self) -> float:
        """The share of baseline matches the candidate won (0.0 when none were played)."""
        played = [m for m in self.matches if m.kind == "baseline"]
        return sum(m.won for m in played) / len(played) if played else 0.0

    @property
    def tokens(self) -> int:
        return sum(m.verdict.tokens for m in self.matches)

    @property
    def cost_usd(self) -> float:
        return sum(m.verdict.cost_usd for m in self.matches)

    @property
    def calls(self) -> int:
        """Model calls the judge made for these matches."""
        return sum(m.verdict.calls for m in self.matches)


async def play_match(
    candidate: Contestant,
    opponent: Contestant,
    *,
    kind: Literal["baseline", "pool"],
    judge: PairwiseJudge,
    round: int = 0,
    win_threshold: float = WIN_THRESHOLD,
) -> Match:
    """One match of ``candidate`` against ``opponent``, judged and scored for the candidate."""
    verdict = await judge.compare(candidate, opponent, round=round)
    score = effective_score(verdict, candidate.id)
    outcome = outcome_for(candidate.id, opponent.id, score, win_threshold)
    return Match(opponent.id, kind, verdict, score, outcome.winner == candidate.id, outcome)


async def play_generation(
    candidate: Contestant,
    *,
    baseline: Contestant,
    pool: Sequence[Contestant],
    judge: PairwiseJudge,
    matches_per_generation: int = MATCHES_PER_GENERATION,
    win_threshold: float = WIN_THRESHOLD,
) -> GenerationMatches:
    """Play ``matches_per_generation`` rounds against the baseline and one match against each pool member
    (the caller's top kept candidates; the candidate itself and the baseline are skipped there).

    A match is won when the candidate's effective score reaches ``win_threshold``.
    """
    if candidate.id == baseline.id:
        raise ValueError(f"the candidate and the baseline are the same ({candidate.id!r})")
    if matches_per_generation < 0:
        raise ValueError(f"matches_per_generation must be ≥ 0, got {matches_per_generation}")
    seen = {candidate.id, baseline.id}
    opponents: list[tuple[Contestant, Literal["baseline", "pool"], int]] = [
        (baseline, "baseline", n) for n in range(matches_per_generation)
    ]
    for member in pool:
        if member.id not in seen:
            seen.add(member.id)
            opponents.append((member, "pool", 0))
    matches = await asyncio.gather(
        *(
            play_match(candidate, opponent, kind=kind, judge=judge, round=n, win_threshold=win_threshold)
            for opponent, kind, n in opponents
        )
    )
    return GenerationMatches(candidate.id, list(matches))


def update_pool(
    pool: Mapping[str, float], candidate_id: str, rating: float, k: int = POOL_SIZE
) -> dict[str, float]:
    """The self-play pool after a kept candidate with ``rating`` joins: the top ``k`` ids by rating, best
    first (a candidate already in the pool gets its new rating; on equal ratings incumbents stay ahead)."""
    merged = {**{i: r for i, r in pool.items() if i != candidate_id}, candidate_id: rating}
    ranked = sorted(merged.items(), key=lambda item: -item[1])
    return dict(ranked[: max(k, 0)])
