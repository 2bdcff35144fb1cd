"""Tournaments: pairwise judges (``JUDGES``: ``scores``, ``llm``) and a generation's matches against the
baseline and the self-play pool, turned into rating outcomes."""

from assay.tournament.judges import (
    JUDGES,
    Contestant,
    LLMPairJudge,
    PairVerdict,
    PairwiseJudge,
    ScoresJudge,
    parse_answer,
)
from assay.tournament.matches import (
    GenerationMatches,
    Match,
    clamp_score,
    effective_score,
    outcome_for,
    play_generation,
    play_match,
    update_pool,
)

__all__ = [
    "JUDGES",
    "Contestant",
    "GenerationMatches",
    "LLMPairJudge",
    "Match",
    "PairVerdict",
    "PairwiseJudge",
    "ScoresJudge",
    "clamp_score",
    "effective_score",
    "outcome_for",
    "parse_answer",
    "play_generation",
    "play_match",
    "update_pool",
]
