"""A generation's matches: the candidate against the baseline (several rounds) and against each member of the
self-play pool, each turned into a rating ``MatchOutcome`` by seed 000's rules.

With a judge that compares scores (``PairVerdict.means`` set: the ``scores`` judge), a baseline match is won
when the candidate's own score (its mean case score, 0..1, on the match's sample of cases) exceeds
``win_threshold`` and lost otherwise; any other match compares the two raw scores on the same sample: the higher
wins, equal is a tie. With a judge that only names a winner (``llm``), the winner wins, whatever the kind."""

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
# Scores a hair over or under a bound through float rounding count as on it.
_EPSILON = 1e-9

MatchKind = Literal["baseline", "pool"]


def clamp_score(a: float, b: float) -> float:
    """The match score of a side with mean ``a`` against one with mean ``b``: clamp(0.5 + (a − b)/2)."""
    return min(1.0, max(0.0, 0.5 + (a - b) / 2))


def effective_score(verdict: PairVerdict, candidate: str) -> float:
    """The candidate's 0..1 match score (what a tournament-fed gate averages): from the two mean scores when the
    judge compared scores (``verdict.means`` is (candidate, opponent)), else 1 for a win, 0 for a loss, 0.5 for
    a tie."""
    if verdict.means is not None:
        return clamp_score(*verdict.means)
    if verdict.winner is None:
        return 0.5
    return 1.0 if verdict.winner == candidate else 0.0


def outcome_for(
    candidate: str, opponent: str, score: float, threshold: float = WIN_THRESHOLD
) -> MatchOutcome:
    """The rating outcome of a judge's match score: the candidate wins at ``score`` ≥ threshold, loses at
    ≤ 1 − threshold, and ties in between."""
    if score >= threshold - _EPSILON:
        winner: str | None = candidate
    elif score <= 1 - threshold + _EPSILON:
        winner = opponent
    else:
        winner = None
    return MatchOutcome(candidate, opponent, winner)


def baseline_outcome(
    candidate: str, baseline: str, own_score: float, threshold: float = WIN_THRESHOLD
) -> MatchOutcome:
    """Seed 000's baseline match: a win when the candidate's own score exceeds ``threshold``, else a loss (a
    score on the threshold does not exceed it)."""
    return MatchOutcome(candidate, baseline, candidate if own_score > threshold + _EPSILON else baseline)


def judged_outcome(
    verdict: PairVerdict, candidate: str, opponent: str, kind: MatchKind, threshold: float = WIN_THRESHOLD
) -> MatchOutcome:
    """The rating outcome of one judged match (see the module docstring for the rules)."""
    if verdict.means is None:
        return outcome_for(candidate, opponent, effective_score(verdict, candidate), threshold)
    if kind == "baseline":
        return baseline_outcome(candidate, opponent, verdict.means[0], threshold)
    return MatchOutcome(candidate, opponent, verdict.winner)


@dataclass
class Match:
    """One match of the candidate against ``opponent``: the verdict, the candidate's match score
    (:func:`effective_score`), whether it won, and why (the rule applied, then the judge's reason)."""

    opponent: str
    kind: MatchKind
    verdict: PairVerdict
    score: float
    won: bool
    outcome: MatchOutcome
    reason: str = ""


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
    kind: MatchKind,
    judge: PairwiseJudge,
    round: int = 0,
    win_threshold: float = WIN_THRESHOLD,
) -> Match:
    """One match of ``candidate`` against ``opponent``, judged and scored for the candidate."""
    verdict = await judge.compare(candidate, opponent, round=round)
    outcome = judged_outcome(verdict, candidate.id, opponent.id, kind, win_threshold)
    score = effective_score(verdict, candidate.id)
    won = outcome.winner == candidate.id
    reason = verdict.reason
    if verdict.means is not None and kind == "baseline":
        relation = ">" if won else "≤"
        reason = f"{'won' if won else 'lost'}: own score {verdict.means[0]:.4f} {relation} {win_threshold}; {reason}"
    return Match(opponent.id, kind, verdict, score, won, outcome, reason)


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

    Outcomes follow the module docstring's rules (``win_threshold`` for the baseline matches).
    """
    if candidate.id == baseline.id:
        raise ValueError(f"the candidate and the baseline are the same ({candidate.id!r})")
    if matches_per_generation < 0:
        raise ValueError(f"matches_per_generation must be ≥ 0, got {matches_per_generation}")
    seen = {candidate.id, baseline.id}
    opponents: list[tuple[Contestant, MatchKind, int]] = [
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
