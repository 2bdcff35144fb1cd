"""Request and response bodies of the HTTP API (pydantic; shown in the OpenAPI docs at ``/docs``).

Request bodies are strict: no field converts a value of another JSON type (see :data:`REQUEST`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

FeedbackKind = Literal["pairwise", "tie", "winner_only", "loser_only"]
# Request bodies take JSON's types as they are: a string or a boolean where a number belongs (``"0.5"``,
# ``true``) is refused, not converted; an integer where a float belongs is a number and is taken.
REQUEST = ConfigDict(extra="forbid", strict=True)


class FeedbackIn(BaseModel):
    """One piece of feedback: ``winner`` and ``loser`` (pairwise, or a tie with ``tie``), or one of them alone.

    The semantic router's field names are accepted as they are: ``winner_model``, ``loser_model`` and
    ``decision_name`` mean ``winner``, ``loser`` and ``category``; ``response``, ``conversation_id``,
    ``feedback_type`` and ``timestamp`` are stored with the event.
    """

    model_config = REQUEST

    winner: str | None = Field(None, description="The variant that did better (alone: +0.1·K).")
    loser: str | None = Field(None, description="The variant that did worse (alone: −0.1·K).")
    tie: bool = Field(False, description="Both did equally well; needs winner and loser.")
    category: str | None = Field(None, description="Also update this category's ratings.")
    confidence: float = Field(1.0, description="In [0, 1]; scales the update (K·confidence).")
    query: str | None = Field(None, max_length=100_000)
    user_id: str | None = Field(None, max_length=200)
    session_id: str | None = Field(None, max_length=200)
    idempotency_key: str | None = Field(
        None, max_length=200, description="A retried request with the same key is counted once."
    )
    winner_model: str | None = Field(None, description="The router's name for `winner`.")
    loser_model: str | None = Field(None, description="The router's name for `loser`.")
    decision_name: str | None = Field(None, description="The router's name for `category`.")
    response: str | None = Field(None, max_length=100_000, description="The response judged (stored).")
    conversation_id: str | None = Field(None, max_length=200)
    feedback_type: str | None = Field(
        None, max_length=64, description="satisfied, need_clarification, wrong_answer, want_different, ..."
    )
    timestamp: float | str | None = Field(
        None, description="When the client saw it: UNIX seconds or an RFC 3339 time (stored)."
    )


class RatingChange(BaseModel):
    """How one rating row moved."""

    variant: str
    category: str | None
    before: float
    after: float


class FeedbackOut(BaseModel):
    """The recorded feedback: its event id, kind and the rating changes; ``duplicate`` for a retried key.

    ``success``, ``message`` and ``timestamp`` are the semantic router's answer, for its clients.
    """

    success: bool = True
    message: str = "Feedback recorded successfully"
    timestamp: str = ""
    event_id: int
    kind: FeedbackKind
    category: str | None
    confidence: float
    duplicate: bool = False
    changes: list[RatingChange]


class SelectIn(BaseModel):
    """Which variants to choose from (all registered ones when omitted), in which category, how cost-aware."""

    model_config = REQUEST

    candidates: list[str] | None = Field(None, max_length=1000)
    category: str | None = None
    cost_weight: float = Field(0.0, description="0 ignores cost; larger values favour cheaper variants.")
    strategy: Literal["best", "sample"] = "best"


class CandidateOut(BaseModel):
    """One candidate as selection saw it."""

    name: str
    rating: float
    source: str
    probability: float
    score: float
    cost_per_1m_tokens: float


class SelectOut(BaseModel):
    """The chosen variant, its probability, confidence and a one-line reason; every candidate's figures."""

    variant: str
    probability: float
    score: float
    rating: float
    confidence: float
    comparisons: int
    category: str | None
    reasoning: str = Field(description="The router's line: `Selected based on Elo rating R (win rate: w/n)`.")
    detail: str = Field(description="Candidates, probability, cost adjustment and confidence in one line.")
    candidates: list[CandidateOut]


class VariantIn(BaseModel):
    """A variant's cost, the categories it serves (none = all) and static category scores in [0, 1]."""

    model_config = REQUEST

    cost_per_1m_tokens: float = 0.0
    description: str = Field("", max_length=10_000)
    categories: list[str] | None = None
    category_scores: dict[str, float] = Field(
        default_factory=dict, description="Seeds a category rating at 1000 + 1000·score (never over learned)."
    )


class VariantOut(BaseModel):
    """A registered variant; ``seeded``/``kept`` say which category seeds were applied or left (learned)."""

    name: str
    cost_per_1m_tokens: float
    description: str
    categories: list[str] | None
    created: bool = False
    seeded: dict[str, float] = Field(default_factory=dict)
    kept: list[str] = Field(default_factory=list)


class RatingOut(BaseModel):
    """A variant's rating in a category (``source``: category, seed, global or start) and its counts."""

    rank: int | None = None
    name: str
    category: str | None
    rating: float
    source: str
    wins: int
    losses: int
    ties: int
    comparisons: int
    win_rate: float | None
    confidence: float
    cost_per_1m_tokens: float


class RecomputeIn(BaseModel):
    """Replay the feedback log with another backend and/or a time-decay half-life (read-only)."""

    model_config = REQUEST

    backend: str = "elo"
    category: str | None = None
    half_life_days: float | None = Field(None, description="Older feedback weighs 0.5^(age/half-life).")


class RecomputeOut(BaseModel):
    """The leaderboard the replay gives."""

    backend: str
    category: str | None
    events: int
    half_life_days: float | None
    leaderboard: list[dict[str, object]]
