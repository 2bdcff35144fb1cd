"""The tournament each generation: the candidate plays the baseline, then opponents chosen from the candidates
rated so far (autocontext's self-play pool, SIFT's top K, or adaptive binary insertion); outcomes update a
rating backend.

:class:`Ratings` is loop state: it changes only by :meth:`Ratings.apply` of a ``matches`` event.
:func:`play_matches` plays a generation on a scratch copy and returns that event.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

from assay.config import TournamentConfig
from assay.evaluation.evaluator import EvalResult
from assay.loop.events import MatchesPlayed, MatchLog, MatchOutcomeData
from assay.ratings import EloRating, RatingBackendProtocol, make_rating
from assay.ratings.base import MatchOutcome, RatingBackend
from assay.search import Archive, adaptive_next, top_k
from assay.tournament import (
    Contestant,
    PairwiseJudge,
    play_generation,
    play_match,
    update_pool,
)

# Reads a commit's artifact files (path -> text) for a judge that looks at files.
FileReader = Callable[[str], dict[str, str]]
# Elo's K of the matches events an assay older than ``tournament.k_factor`` wrote (they record none).
RECORDED_K = 32.0
TIE_DIGITS = 6  # Elo points to 1e-6: far below any difference a judge can make, far above float noise


def rating_backend(
    settings: TournamentConfig, given: RatingBackendProtocol | str | None = None
) -> RatingBackend:
    """The backend for the tournament: the one ``given`` (an object, used as it is, or a name), else a fresh
    ``settings.rating``; an Elo one built here with ``settings.k_factor``."""
    if given is not None and not isinstance(given, str):
        return make_rating(given)
    backend = make_rating(given or settings.rating)
    if isinstance(backend, EloRating):
        backend.k = settings.k_factor
    return backend


def elo_k(backend: RatingBackend) -> float | None:
    """The K an Elo backend updates with (None for another backend)."""
    return backend.k if isinstance(backend, EloRating) else None


@dataclass
class Ratings:
    """Ratings, the self-play pool, and what each rated candidate is (its dev results and commit)."""

    settings: TournamentConfig
    baseline_id: str
    backend: RatingBackend
    results: dict[str, EvalResult | None] = field(default_factory=dict)
    commits: dict[str, str] = field(default_factory=dict)
    pool: dict[str, float] = field(default_factory=dict)

    @classmethod
    def start(
        cls,
        settings: TournamentConfig,
        baseline_id: str,
        baseline: EvalResult | None,
        commit: str,
        *,
        backend: RatingBackendProtocol | str | None = None,
    ) -> Ratings:
        """Ratings of a run whose baseline is ``baseline_id`` at ``commit`` (``backend``: see
        :func:`rating_backend`)."""
        return cls(
            settings,
            baseline_id,
            rating_backend(settings, backend),
            results={baseline_id: baseline},
            commits={baseline_id: commit},
        )

    def apply(self, event: MatchesPlayed, dev: EvalResult | None) -> None:
        """Fold one generation's matches: the rating updates in order, the candidate, and the pool (nothing for
        matches that are not ``rated``: autocontext keeps only an advance's Elo)."""
        if not event.rated:
            return
        if isinstance(self.backend, EloRating):
            # The K the updates were made with: a run an older assay started goes on with its K 32.
            self.backend.k = event.k_factor or RECORDED_K
        for batch in event.updates:
            self.backend.update([MatchOutcome(o.a, o.b, o.winner, weight=o.weight) for o in batch])
        if dev is not None or event.candidate not in self.results:
            self.results[event.candidate] = dev
        if event.commit is not None:
            self.commits[event.candidate] = event.commit
        if event.kept:
            # The members at their ratings now: one a newcomer beat has gone down since it joined.
            members = {cid: self.backend.rating(cid).rating for cid in self.pool}
            rating = self.backend.rating(event.candidate).rating
            self.pool = update_pool(members, event.candidate, rating, k=self.settings.pool_size)

    def incumbents(self, candidate_id: str) -> list[tuple[str, float]]:
        """Every rated candidate but the newcomer and the baseline, with its current rating."""
        return [
            (name, rating.rating)
            for name, rating in self.backend.ratings().items()
            if name not in (candidate_id, self.baseline_id) and name in self.results
        ]

    def rank_archive(self, archive: Archive) -> None:
        """Give each archive node its rank by rating (0 = best); nodes never rated keep ``bt_rank`` None."""
        by_commit = {commit: cid for cid, commit in self.commits.items()}
        rated = self.backend.ratings()
        # Ratings equal in theory (candidates with the same results) differ in their last bits by the solver's
        # path, which changes with numpy and scipy releases: rounded, such ties are broken by id, everywhere.
        order = sorted(
            (cid for cid in rated if cid in self.commits),
            key=lambda cid: (-round(rated[cid].rating, TIE_DIGITS), cid),
        )
        rank = {cid: index for index, cid in enumerate(order)}
        for node in archive.nodes():
            cid = by_commit.get(node.id)
            node.bt_rank = rank.get(cid) if cid is not None else None


class Players:
    """Candidates as a judge sees them: results from the ratings, files read once per commit."""

    def __init__(
        self, ratings: Ratings, read_files: FileReader | None, cache: dict[str, dict[str, str]]
    ) -> None:
        self.ratings = ratings
        self.read_files = read_files
        self.cache = cache

    def __call__(self, candidate_id: str) -> Contestant:
        files: dict[str, str] = {}
        commit = self.ratings.commits.get(candidate_id)
        if self.read_files is not None and commit is not None:
            if commit not in self.cache:
                self.cache[commit] = self.read_files(commit)
            files = self.cache[commit]
        return Contestant(candidate_id, files, self.ratings.results.get(candidate_id))


async def play_matches(
    ratings: Ratings,
    candidate_id: str,
    dev: EvalResult,
    kept: bool,
    *,
    commit: str | None,
    judge: PairwiseJudge,
    read_files: FileReader | None = None,
    file_cache: dict[str, dict[str, str]] | None = None,
) -> tuple[MatchesPlayed, int, int, float]:
    """Play the candidate's matches on a copy of ``ratings`` (which stays as it is) and return the event to
    apply, with the judge's model calls, tokens and cost."""
    scratch = copy.deepcopy(ratings)
    scratch.results[candidate_id] = dev
    if commit is not None:
        scratch.commits[candidate_id] = commit
    players = Players(scratch, read_files, {} if file_cache is None else file_cache)
    settings = scratch.settings
    pool: list[Contestant] = []
    if settings.opponents == "pool":
        pool = [players(cid) for cid in scratch.pool]
    elif settings.opponents == "top_k":
        pool = [players(cid) for cid in top_k(scratch.incumbents(candidate_id), settings.k)]
    me = players(candidate_id)
    played = await play_generation(
        me,
        baseline=players(scratch.baseline_id),
        pool=pool,
        judge=judge,
        matches_per_generation=settings.matches_per_generation or 0,
        win_threshold=settings.win_threshold,
    )
    updates = [list(played.outcomes)]
    scratch.backend.update(updates[0])
    if settings.opponents == "adaptive":
        # Binary insertion: each next opponent is the incumbent rated closest to the newcomer's rating after
        # the previous match (a comparison near 50:50 tells the most).
        incumbents = scratch.incumbents(candidate_id)
        asked: set[str] = set()
        for _ in range(settings.k):
            opponent = adaptive_next(scratch.backend.rating(candidate_id).rating, incumbents, asked)
            if opponent is None:
                break
            asked.add(opponent)
            match = await play_match(
                me, players(opponent), kind="pool", judge=judge, win_threshold=settings.win_threshold
            )
            played.matches.append(match)
            updates.append([match.outcome])
            scratch.backend.update([match.outcome])
    rating = scratch.backend.rating(candidate_id)
    event = MatchesPlayed(
        candidate=candidate_id,
        commit=commit,
        kept=kept,
        updates=[
            [MatchOutcomeData(a=o.a, b=o.b, winner=o.winner, weight=o.weight) for o in batch]
            for batch in updates
        ],
        baseline_win_rate=played.baseline_win_rate,
        rating=rating.rating,
        uncertainty=rating.uncertainty,
        score=sum(m.score for m in played.matches) / len(played.matches) if played.matches else 0.5,
        matches=[
            MatchLog(
                opponent=m.opponent,
                kind=m.kind,
                score=m.score,
                won=m.won,
                votes=list(m.verdict.votes),
                reason=m.reason[:500],
            )
            for m in played.matches
        ],
        k_factor=elo_k(scratch.backend),
    )
    tokens = sum(m.verdict.tokens for m in played.matches)
    return event, played.calls, tokens, played.cost_usd


async def play_screening(
    ratings: Ratings,
    candidate_id: str,
    *,
    commit: str,
    parent: str,
    judge: PairwiseJudge,
    read_files: FileReader,
    file_cache: dict[str, dict[str, str]],
) -> tuple[MatchesPlayed, int, int, float]:
    """SIFT's judge-first ranking: the new candidate, not yet evaluated, against its parent and the ``k``
    best-rated candidates, judged on their files; the matches as an event to apply (``stage`` screen), with the
    judge's model calls, tokens and cost."""
    scratch = copy.deepcopy(ratings)
    scratch.commits[candidate_id] = commit
    players = Players(scratch, read_files, file_cache)
    by_commit = {c: cid for cid, c in scratch.commits.items()}
    opponents = [by_commit[parent]] if parent in by_commit else []
    opponents += [
        cid for cid in top_k(scratch.incumbents(candidate_id), scratch.settings.k) if cid not in opponents
    ]
    me = Contestant(candidate_id, players(candidate_id).files, None)
    played = [
        await play_match(
            me, players(opponent), kind="pool", judge=judge, win_threshold=scratch.settings.win_threshold
        )
        for opponent in opponents
    ]
    scratch.backend.update([m.outcome for m in played])
    rating = scratch.backend.rating(candidate_id)
    event = MatchesPlayed(
        candidate=candidate_id,
        commit=commit,
        kept=False,
        stage="screen",
        updates=[
            [
                MatchOutcomeData(
                    a=m.outcome.a, b=m.outcome.b, winner=m.outcome.winner, weight=m.outcome.weight
                )
                for m in played
            ]
        ],
        baseline_win_rate=0.0,
        rating=rating.rating,
        uncertainty=rating.uncertainty,
        score=sum(m.score for m in played) / len(played) if played else 0.5,
        matches=[
            MatchLog(
                opponent=m.opponent,
                kind="screen",
                score=m.score,
                won=m.won,
                votes=list(m.verdict.votes),
                reason=m.reason[:500],
            )
            for m in played
        ],
        k_factor=elo_k(scratch.backend),
    )
    return (
        event,
        sum(m.verdict.calls for m in played),
        sum(m.verdict.tokens for m in played),
        sum(m.verdict.cost_usd for m in played),
    )
