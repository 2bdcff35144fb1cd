"""Turning request bodies into checked values; every refusal is an :class:`ApiError` with a stable code."""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass

from assay.serve.errors import ApiError
from assay.serve.schemas import FeedbackIn, FeedbackKind
from assay.serve.tables import CATEGORY_LENGTH, NAME_LENGTH

_CATEGORY = re.compile(r"^[\w.:/-]+$")


@dataclass(frozen=True)
class Feedback:
    """A checked feedback: names trimmed, kind decided, ``fingerprint`` identifying its content."""

    kind: FeedbackKind
    winner: str | None
    loser: str | None
    category: str | None
    confidence: float
    query: str | None
    user_id: str | None
    session_id: str | None
    idempotency_key: str | None

    @property
    def names(self) -> list[str]:
        """The variants this feedback is about."""
        return [n for n in (self.winner, self.loser) if n is not None]

    @property
    def fingerprint(self) -> str:
        """A hash of everything but the idempotency key: a retry must carry the same content."""
        content = {k: v for k, v in asdict(self).items() if k != "idempotency_key"}
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def variant_name(value: str, field: str = "name") -> str:
    """A trimmed variant name (1..200 printable characters)."""
    name = value.strip()
    if not name:
        raise ApiError("invalid_name", f"{field}: a variant name must not be empty", field=field)
    if len(name) > NAME_LENGTH or not name.isprintable():
        raise ApiError(
            "invalid_name", f"{field}: a variant name is 1..{NAME_LENGTH} printable characters", field=field
        )
    return name


def category_name(value: str | None, field: str = "category") -> str | None:
    """A trimmed category (letters, digits, ``_ . : / -``; at most 100), or None when empty."""
    if value is None or not value.strip():
        return None
    name = value.strip()
    if len(name) > CATEGORY_LENGTH or not _CATEGORY.match(name):
        raise ApiError(
            "invalid_name",
            f"{field}: {name!r} is not a category (letters, digits, _ . : / -; at most {CATEGORY_LENGTH})",
            field=field,
        )
    return name


def finite_in(value: float, low: float, high: float, code: str, field: str) -> float:
    """``value`` if it is a finite number in [low, high]; an ApiError with ``code`` otherwise."""
    if not isinstance(value, int | float) or not math.isfinite(value) or not low <= value <= high:
        raise ApiError(
            code, f"{field}: must be a finite number in [{low:g}, {high:g}], got {value!r}", field=field
        )
    return float(value)


def check_feedback(body: FeedbackIn, header_key: str | None = None) -> Feedback:
    """Check a feedback body; ``header_key`` is the ``Idempotency-Key`` header (must agree with the body's)."""
    winner = variant_name(body.winner, "winner") if body.winner and body.winner.strip() else None
    loser = variant_name(body.loser, "loser") if body.loser and body.loser.strip() else None
    if winner is None and loser is None:
        raise ApiError("missing_models", "give winner and loser (pairwise or tie), or one of them alone")
    if winner is not None and winner == loser:
        raise ApiError("self_comparison", f"winner and loser are the same variant {winner!r}")
    if body.tie and (winner is None or loser is None):
        raise ApiError("invalid_tie", "a tie needs both winner and loser")
    confidence = finite_in(body.confidence, 0.0, 1.0, "invalid_confidence", "confidence")
    key = (body.idempotency_key or "").strip() or None
    header = (header_key or "").strip() or None
    if key and header and key != header:
        raise ApiError(
            "invalid_request", "idempotency_key in the body differs from the Idempotency-Key header"
        )
    kind: FeedbackKind
    if winner is not None and loser is not None:
        kind = "tie" if body.tie else "pairwise"
    else:
        kind = "winner_only" if winner is not None else "loser_only"
    return Feedback(
        kind=kind,
        winner=winner,
        loser=loser,
        category=category_name(body.category),
        confidence=confidence,
        query=body.query,
        user_id=body.user_id,
        session_id=body.session_id,
        idempotency_key=key or header,
    )
