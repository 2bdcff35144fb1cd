"""The tournament each generation: the candidate plays the baseline, then opponents chosen from the candidates
rated so far (autocontext's self-play pool, SIFT's top K, or adaptive binary insertion); outcomes update a
rating backend. Logged as ``matches`` events, replayed on resume."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.config import TournamentConfig
from assay.evaluation.evaluator import EvalResult
from assay.history.records import EventRecord
from assay.ratings import make_rating
from assay.ratings.base import Outcome
from assay.search import Archive, adaptive_next, top_k
from assay.tournament import (
    Contestant,
    GenerationMatches,
    PairwiseJudge,
    ScoresJudge,
    play_generation,
    play_match,
    update_pool,
)

# Reads a commit's artifact files (path -> text) for a judge that looks at files.
FileReader = Callable[[str], dict[str, str]]


class Tournament:
    """Rates candidates by matches judged by ``judge`` (default: per-case scores, no model calls)."""

    def __init__(
        self,
        settings: TournamentConfig,
        baseline_id: str,
        baseline: EvalResult | None,
        *,
        baseline_commit: str | None = None,
        judge: PairwiseJudge | None = None,
        read_files: FileReader | None = None,
    ) -> None:
        self.settings = settings
        self.backend = make_rating(settings.rating)
        self.judge = judge or ScoresJudge()
        self.read_files = read_files
        self.baseline_id = baseline_id
        self.results: dict[str, EvalResult | None] = {baseline_id: baseline}
        self.commits: dict[str, str] = {baseline_id: baseline_commit} if baseline_commit else {}
        self.pool: dict[str, float] = {}
        self._files: dict[str, dict[str, str]] = {}

    def replay(self, events: list[EventRecord], decided: set[str]) -> None:
        """Rebuild ratings, the pool and the candidate → commit map from logged matches of decided candidates
        (a candidate killed before its record was written plays again). Results of old candidates are not
        kept: their future matches under the scores judge are ties until they are measured again."""
        for event in events:
            if event.kind != "matches" or event.data.get("candidate") not in decided:
                continue
            candidate = event.data["candidate"]
            self.backend.update([Outcome(**o) for o in event.data.get("outcomes", [])])
            if event.data.get("commit"):
                self.commits[candidate] = event.data["commit"]
            self.results.setdefault(candidate, None)
            if event.data.get("kept"):
                self.pool = update_pool(
                    self.pool, candidate, self.backend.rating(candidate).rating, k=self.settings.pool_size
                )

    def contestant(self, candidate_id: str) -> Contestant:
        """A candidate as the judge sees it: its results and, for a judge that reads files, its files."""
        files: dict[str, str] = {}
        commit = self.commits.get(candidate_id)
        if self.read_files is not None and commit is not None:
            if commit not in self._files:
                self._files[commit] = self.read_files(commit)
            files = self._files[commit]
        return Contestant(candidate_id, files, self.results.get(candidate_id))

    def _incumbents(self, candidate_id: str) -> list[tuple[str, float]]:
        """Every rated candidate but the newcomer and the baseline, with its current rating."""
        return [
            (name, rating.rating)
            for name, rating in self.backend.ratings().items()
            if name not in (candidate_id, self.baseline_id) and name in self.results
        ]

    async def play(
        self, candidate_id: str, dev: EvalResult, kept: bool, *, commit: str | None = None
    ) -> dict[str, Any]:
        """Play one generation's matches; return what to log (outcomes, baseline win rate, rating, judge
        calls, tokens and cost)."""
        self.results[candidate_id] = dev
        if commit is not None:
            self.commits[candidate_id] = commit
        settings = self.settings
        me = self.contestant(candidate_id)
        pool: list[Contestant] = []
        if settings.opponents == "pool":
            pool = [self.contestant(cid) for cid in self.pool]
        elif settings.opponents == "top_k":
            pool = [self.contestant(cid) for cid in top_k(self._incumbents(candidate_id), settings.k)]
        played = await play_generation(
            me,
            baseline=self.contestant(self.baseline_id),
            pool=pool,
            judge=self.judge,
            matches_per_generation=settings.matches_per_generation,
            win_threshold=settings.win_threshold,
        )
        self.backend.update(played.outcomes)
        if settings.opponents == "adaptive":
            await self._insert(me, played)
        rating = self.backend.rating(candidate_id)
        if kept:
            self.pool = update_pool(self.pool, candidate_id, rating.rating, k=settings.pool_size)
        return {
            "candidate": candidate_id,
            "commit": commit,
            "kept": kept,
            "baseline_win_rate": played.baseline_win_rate,
            "rating": rating.rating,
            "uncertainty": rating.uncertainty,
            "judge_calls": played.calls,
            "tokens": sum(m.verdict.tokens for m in played.matches),
            "cost_usd": played.cost_usd,
            "outcomes": [
                {"a": o.a, "b": o.b, "winner": o.winner, "weight": o.weight} for o in played.outcomes
            ],
            "matches": [
                {
                    "opponent": m.opponent,
                    "kind": m.kind,
                    "score": m.score,
                    "votes": m.verdict.votes,
                    "reason": m.verdict.reason[:500],
                }
                for m in played.matches
            ],
        }

    async def _insert(self, me: Contestant, played: GenerationMatches) -> None:
        """Binary insertion: up to ``k`` matches, each against the incumbent rated closest to the newcomer's
        rating after the previous match (a comparison near 50:50 tells the most)."""
        incumbents = self._incumbents(me.id)
        asked: set[str] = set()
        for _ in range(self.settings.k):
            estimate = self.backend.rating(me.id).rating
            opponent = adaptive_next(estimate, incumbents, asked)
            if opponent is None:
                return
            asked.add(opponent)
            match = await play_match(
                me,
                self.contestant(opponent),
                kind="pool",
                judge=self.judge,
                win_threshold=self.settings.win_threshold,
            )
            played.matches.append(match)
            self.backend.update([match.outcome])

    def rank_archive(self, archive: Archive) -> None:
        """Give each archive node its rank by rating (0 = best); nodes never rated keep ``bt_rank`` None."""
        by_commit = {commit: cid for cid, commit in self.commits.items()}
        rated = self.backend.ratings()
        order = sorted(
            (cid for cid in rated if cid in self.commits), key=lambda cid: (-rated[cid].rating, cid)
        )
        rank = {cid: index for index, cid in enumerate(order)}
        for node in archive.nodes():
            cid = by_commit.get(node.id)
            node.bt_rank = rank.get(cid) if cid is not None else None
