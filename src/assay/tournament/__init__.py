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
    baseline_outcome,
    clamp_score,
    effective_score,
    judged_outcome,
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
    "baseline_outcome",
    "clamp_score",
    "effective_score",
    "judged_outcome",
    "outcome_for",
    "parse_answer",
    "play_generation",
    "play_match",
    "update_pool",
]
