"""The tournament each generation (autocontext): the candidate plays the baseline and the self-play pool of the
top kept candidates; outcomes update a rating backend. Logged as ``matches`` events, replayed on resume."""

from __future__ import annotations

from typing import Any

from assay.config import TournamentConfig
from assay.evaluation.evaluator import EvalResult
from assay.history.records import EventRecord
from assay.ratings import make_rating
from assay.ratings.base import Outcome
from assay.tournament import Contestant, ScoresJudge, play_generation, update_pool


class Tournament:
    """Rates candidates by matches on the cases they share (the ``scores`` judge: no extra model calls)."""

    def __init__(self, settings: TournamentConfig, baseline_id: str, baseline: EvalResult | None) -> None:
        self.settings = settings
        self.backend = make_rating(settings.rating)
        self.judge = ScoresJudge()
        self.baseline = Contestant(baseline_id, {}, baseline)
        self.results: dict[str, EvalResult | None] = {baseline_id: baseline}
        self.pool: dict[str, float] = {}

    def replay(self, events: list[EventRecord], decided: set[str]) -> None:
        """Rebuild ratings and the pool from logged matches of decided candidates (a candidate killed before its
        record was written plays again). Results of old pool members are not kept: their future matches are
        ties until they are measured again."""
        for event in events:
            if event.kind != "matches" or event.data.get("candidate") not in decided:
                continue
            self.backend.update([Outcome(**o) for o in event.data.get("outcomes", [])])
            if event.data.get("kept"):
                candidate = event.data["candidate"]
                self.pool = update_pool(
                    self.pool, candidate, self.backend.rating(candidate).rating, k=self.settings.pool_size
                )

    async def play(self, candidate_id: str, dev: EvalResult, kept: bool) -> dict[str, Any]:
        """Play one generation's matches; return what to log (outcomes, baseline win rate, rating)."""
        self.results[candidate_id] = dev
        pool = [Contestant(cid, {}, self.results.get(cid)) for cid in self.pool]
        played = await play_generation(
            Contestant(candidate_id, {}, dev),
            baseline=self.baseline,
            pool=pool,
            judge=self.judge,
            matches_per_generation=self.settings.matches_per_generation,
            win_threshold=self.settings.win_threshold,
        )
        self.backend.update(played.outcomes)
        rating = self.backend.rating(candidate_id)
        if kept:
            self.pool = update_pool(self.pool, candidate_id, rating.rating, k=self.settings.pool_size)
        return {
            "candidate": candidate_id,
            "kept": kept,
            "baseline_win_rate": played.baseline_win_rate,
            "rating": rating.rating,
            "uncertainty": rating.uncertainty,
            "outcomes": [
                {"a": o.a, "b": o.b, "winner": o.winner, "weight": o.weight} for o in played.outcomes
            ],
        }
