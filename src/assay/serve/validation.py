"""Turning request bodies into checked values; every refusal is an :class:`ApiError` with a stable code."""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from functools import cached_property

from assay.serve.errors import ApiError
from assay.serve.schemas import FeedbackIn, FeedbackKind
from assay.serve.tables import CATEGORY_LENGTH, FEEDBACK_TYPE_LENGTH, NAME_LENGTH

_CATEGORY = re.compile(r"^[\w.:/-]+$")
# U+FFFD is what a decoder leaves for bytes that were not UTF-8 (``%FF`` in a path): never a real name.
_REPLACEMENT = "\ufffd"


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
    response: str | None = None
    conversation_id: str | None = None
    feedback_type: str | None = None
    client_time: float | None = None
    register: bool = field(default=False, compare=False)

    @property
    def names(self) -> list[str]:
        """The variants this feedback is about."""
        return [n for n in (self.winner, self.loser) if n is not None]

    @cached_property
    def fingerprint(self) -> str:
        """A hash of everything but the idempotency key: a retry must carry the same content."""
        # Every field holds a plain value, so reading them is what asdict would give, without its deep copies.
        content = {name: getattr(self, name) for name in _FINGERPRINTED}
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


_FINGERPRINTED = tuple(f.name for f in fields(Feedback) if f.name not in ("idempotency_key", "register"))


def variant_name(value: str, field: str = "name") -> str:
    """A trimmed variant name (1..200 printable characters): spaces around it are trimmed, a control character
    anywhere (``"A\n"`` as ``"A\u0007"``) is refused, never trimmed into another variant's name."""
    name = value.strip(" ")
    if not name:
        raise ApiError("invalid_name", f"{field}: a variant name must not be empty", field=field)
    if len(name) > NAME_LENGTH or not name.isprintable() or _REPLACEMENT in name:
        raise ApiError(
            "invalid_name",
            f"{field}: a variant name is 1..{NAME_LENGTH} printable characters of valid UTF-8",
            field=field,
        )
    return name


def label(value: str | None, field: str, limit: int = NAME_LENGTH) -> str | None:
    """A trimmed identifier such as a user, session or idempotency key: printable, at most ``limit``."""
    if value is None or not value.strip():
        return None
    text = value.strip(" ")
    if len(text) > limit or not text.isprintable() or _REPLACEMENT in text:
        raise ApiError(
            "invalid_request", f"{field}: at most {limit} printable characters of valid UTF-8", field=field
        )
    return text


def free_text(value: str | None, field: str) -> str | None:
    """Text stored as given (a query, a response); refused only when no database could store it."""
    if value is None:
        return None
    if "\x00" in value or not _encodable(value):
        raise ApiError("invalid_request", f"{field}: text must be UTF-8 without NUL characters", field=field)
    return value


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate such as "\ud800", which JSON can carry
        return False
    return True


def client_time(value: float | str | None) -> float | None:
    """The client's ``timestamp`` as UNIX seconds: a number as is, or an RFC 3339 / ISO 8601 time."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ApiError(
                "invalid_request",
                f"timestamp: {value[:40]!r} is neither UNIX seconds nor an RFC 3339 time",
                field="timestamp",
            ) from None
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    return finite_in(value, 0.0, 1e11, "invalid_request", "timestamp")


def category_name(value: str | None, field: str = "category") -> str | None:
    """A trimmed category (letters, digits, ``_ . : / -``; at most 100), or None when empty."""
    if value is None or not value.strip():
        return None
    name = value.strip(" ")
    if len(name) > CATEGORY_LENGTH or not _CATEGORY.fullmatch(name):
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


def _either(ours: str | None, theirs: str | None, field: str, alias: str) -> tuple[str | None, bool]:
    """The value of a field the router spells differently; True when the router's spelling gave it."""
    given, given_alias = ours is not None and bool(ours.strip()), theirs is not None and bool(theirs.strip())
    if given and given_alias and ours.strip() != theirs.strip():  # type: ignore[union-attr]
        raise ApiError("invalid_request", f"{field} and {alias} name different values", field=alias)
    return (ours, False) if given else (theirs, given_alias)


def check_feedback(body: FeedbackIn, header_key: str | None = None) -> Feedback:
    """Check a feedback body; ``header_key`` is the ``Idempotency-Key`` header (must agree with the body's).

    Feedback naming its variants the router's way (``winner_model``/``loser_model``) registers variants it
    names for the first time, as the router does: its clients never register models.
    """
    raw_winner, seed_winner = _either(body.winner, body.winner_model, "winner", "winner_model")
    raw_loser, seed_loser = _either(body.loser, body.loser_model, "loser", "loser_model")
    raw_category, _ = _either(body.category, body.decision_name, "category", "decision_name")
    winner = variant_name(raw_winner, "winner_model" if seed_winner else "winner") if raw_winner else None
    loser = variant_name(raw_loser, "loser_model" if seed_loser else "loser") if raw_loser else None
    if winner is None and loser is None:
        raise ApiError("missing_models", "give winner and loser (pairwise or tie), or one of them alone")
    if winner is not None and winner == loser:
        raise ApiError("self_comparison", f"winner and loser are the same variant {winner!r}")
    if body.tie and (winner is None or loser is None):
        raise ApiError("invalid_tie", "a tie needs both winner and loser")
    confidence = finite_in(body.confidence, 0.0, 1.0, "invalid_confidence", "confidence")
    key = label(body.idempotency_key, "idempotency_key")
    header = label(header_key, "Idempotency-Key")
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
        category=category_name(raw_category, "decision_name" if body.decision_name else "category"),
        confidence=confidence,
        query=free_text(body.query, "query"),
        user_id=label(body.user_id, "user_id"),
        session_id=label(body.session_id, "session_id"),
        idempotency_key=key or header,
        response=free_text(body.response, "response"),
        conversation_id=label(body.conversation_id, "conversation_id"),
        feedback_type=label(body.feedback_type, "feedback_type", FEEDBACK_TYPE_LENGTH),
        client_time=client_time(body.timestamp),
        register=seed_winner or seed_loser,
    )
