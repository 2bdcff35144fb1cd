"""One feedback applied inside one write transaction: lock the rating rows, update them, log the event.

Rows are locked in one global order (every global row by name, then every category row by name) so two
transactions never wait on each other in a cycle. On PostgreSQL the lock is ``SELECT ... FOR UPDATE``; on
SQLite the whole write transaction already holds the database's writer lock (``BEGIN IMMEDIATE``).
Statements are built once at import: building them per request cost more than running them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from assay.serve.errors import ApiError
from assay.serve.schemas import FeedbackOut, RatingChange
from assay.serve.scoring import decayed, elo_pairwise, elo_single
from assay.serve.settings import ServeSettings
from assay.serve.tables import EVENTS, GLOBAL, RATINGS, VARIANTS, insert_ignore
from assay.serve.validation import Feedback

_ROW = (RATINGS.c.variant == sa.bindparam("v")) & (RATINGS.c.category == sa.bindparam("c"))
_LOCK = sa.select(RATINGS).where(_ROW).with_for_update()
_COUNTS = ("wins", "losses", "ties", "comparisons", "feedback")
_UPDATE = (
    RATINGS.update()
    .where(_ROW)
    .values(
        rating=sa.bindparam("r"), updated=sa.bindparam("t"), **{c: sa.bindparam(f"n_{c}") for c in _COUNTS}
    )
)
_SEED = (
    RATINGS.update()
    .where(_ROW)
    .values(rating=sa.bindparam("r"), prior=sa.bindparam("r"), updated=sa.bindparam("t"))
)
_IMPORT = (
    RATINGS.update()
    .where(_ROW)
    .values(
        rating=sa.bindparam("r"),
        prior=sa.bindparam("r"),
        updated=sa.bindparam("t"),
        **{c: sa.bindparam(c) for c in ("wins", "losses", "ties", "comparisons")},
    )
)
_VARIANTS = sa.select(VARIANTS).where(VARIANTS.c.name.in_(sa.bindparam("names", expanding=True)))
_BY_KEY = sa.select(EVENTS).where(EVENTS.c.idempotency_key == sa.bindparam("key"))
_INSERT_EVENT = EVENTS.insert().returning(EVENTS.c.id)


def ensure_row(conn: sa.Connection, variant: str, category: str, value: float, now: float) -> bool:
    """Create the rating row at ``value`` unless it exists; True when created."""
    row = {"variant": variant, "category": category, "rating": value, "prior": value, "updated": now}
    return insert_ignore(conn, RATINGS, {**row, **dict.fromkeys(_COUNTS, 0)})


def seed_row(conn: sa.Connection, variant: str, category: str, value: float, now: float) -> bool:
    """Set a category rating to a static seed unless feedback has already moved it; True when seeded."""
    if ensure_row(conn, variant, category, value, now):
        return True
    if _lock(conn, variant, category)["feedback"]:
        return False
    conn.execute(_SEED, {"v": variant, "c": category, "r": value, "t": now})
    return True


def set_row(
    conn: sa.Connection, variant: str, category: str, value: float, counts: dict[str, int], now: float
) -> bool:
    """Set a rating and its counts (an import) unless feedback has already moved it here; True when set."""
    ensure_row(conn, variant, category, value, now)
    if _lock(conn, variant, category)["feedback"]:
        return False
    conn.execute(_IMPORT, {"v": variant, "c": category, "r": value, "t": now, **counts})
    return True


def _lock(
    conn: sa.Connection, variant: str, category: str, create_at: float | None = None, now: float = 0.0
) -> dict[str, Any]:
    """The row, locked for this transaction; created with rating ``create_at`` first when missing and given."""
    key = {"v": variant, "c": category}
    row = conn.execute(_LOCK, key).mappings().first()
    if row is None and create_at is not None:
        ensure_row(conn, variant, category, create_at, now)
        row = conn.execute(_LOCK, key).mappings().first()
    if row is None:
        raise LookupError(f"no rating row for {variant!r} in {category!r}")
    return dict(row)


def _check_variants(conn: sa.Connection, settings: ServeSettings, fb: Feedback, now: float) -> None:
    known = {row["name"]: row for row in conn.execute(_VARIANTS, {"names": fb.names}).mappings()}
    for name in fb.names:
        row = known.get(name)
        if row is None:
            if settings.unknown_variants == "reject" and not fb.register:
                raise ApiError(
                    "unknown_variant",
                    f"unknown variant {name!r} (register it with PUT /api/v1/variants/{{name}})",
                    variant=name,
                )
            values = {"name": name, "cost_per_1m": 0.0, "description": "", "categories": None, "created": now}
            insert_ignore(conn, VARIANTS, values)
        elif (
            fb.category is not None and row["categories"] is not None and fb.category not in row["categories"]
        ):
            raise ApiError(
                "category_conflict",
                f"variant {name!r} serves categories {row['categories']}, not {fb.category!r}",
                variant=name,
            )


def _duplicate(conn: sa.Connection, fb: Feedback) -> FeedbackOut | None:
    if fb.idempotency_key is None:
        return None
    row = conn.execute(_BY_KEY, {"key": fb.idempotency_key}).mappings().first()
    if row is None:
        return None
    if row["fingerprint"] != fb.fingerprint:
        raise ApiError(
            "idempotency_conflict",
            f"idempotency key {fb.idempotency_key!r} was already used for different feedback (event {row['id']})",
        )
    return FeedbackOut(
        timestamp=rfc3339(row["time"]),
        event_id=row["id"],
        kind=row["kind"],
        category=row["category"],
        confidence=row["confidence"],
        duplicate=True,
        changes=row["result"]["changes"],
    )


def _level(
    conn: sa.Connection,
    settings: ServeSettings,
    fb: Feedback,
    category: str,
    rows: dict[str, dict[str, Any]],
    now: float,
) -> list[RatingChange]:
    """Update the locked rows of one level (global, or the category) and say how they moved."""
    k = settings.k * fb.confidence
    before = {
        n: decayed(r["rating"], r["prior"], now - r["updated"], settings.decay_half_life)
        for n, r in rows.items()
    }
    after = dict(before)
    bumps = {n: dict.fromkeys(_COUNTS, 0) | {"feedback": 1} for n in rows}
    if fb.winner is not None and fb.loser is not None:
        outcome = None if fb.kind == "tie" else "a"
        after[fb.winner], after[fb.loser] = elo_pairwise(before[fb.winner], before[fb.loser], outcome, k)
        for name in (fb.winner, fb.loser):
            bumps[name]["comparisons"] = 1
            bumps[name]["ties" if fb.kind == "tie" else "wins" if name == fb.winner else "losses"] = 1
    else:
        name = fb.names[0]
        after[name] = elo_single(before[name], fb.winner is not None, k)
    changes = []
    for name in fb.names:
        counts = {f"n_{c}": rows[name][c] + bumps[name][c] for c in _COUNTS}
        conn.execute(_UPDATE, {"v": name, "c": category, "r": after[name], "t": now, **counts})
        changes.append(
            RatingChange(variant=name, category=category or None, before=before[name], after=after[name])
        )
    return changes


def apply(conn: sa.Connection, settings: ServeSettings, fb: Feedback, now: float) -> FeedbackOut:
    """Apply ``fb`` to the global ratings (and its category's) and append it to the event log."""
    _check_variants(conn, settings, fb, now)
    names = sorted(fb.names)
    globals_ = {name: _lock(conn, name, GLOBAL, settings.start, now) for name in names}
    duplicate = _duplicate(conn, fb)
    if duplicate is not None:
        return duplicate
    changes = _level(conn, settings, fb, GLOBAL, globals_, now)
    if fb.category is not None:
        rows = {}
        for name in names:
            g = globals_[name]
            fallback = decayed(g["rating"], g["prior"], now - g["updated"], settings.decay_half_life)
            rows[name] = _lock(conn, name, fb.category, fallback, now)
        changes += _level(conn, settings, fb, fb.category, rows, now)
    values = {
        "idempotency_key": fb.idempotency_key,
        "fingerprint": fb.fingerprint,
        "time": now,
        "kind": fb.kind,
        "winner": fb.winner,
        "loser": fb.loser,
        "category": fb.category,
        "confidence": fb.confidence,
        "query": fb.query,
        "user_id": fb.user_id,
        "session_id": fb.session_id,
        "result": {"changes": [c.model_dump(mode="json") for c in changes]},
        "response": fb.response,
        "conversation_id": fb.conversation_id,
        "feedback_type": fb.feedback_type,
        "client_time": fb.client_time,
    }
    event_id = int(conn.execute(_INSERT_EVENT, values).scalar_one())
    return FeedbackOut(
        timestamp=rfc3339(now),
        event_id=event_id,
        kind=fb.kind,
        category=fb.category,
        confidence=fb.confidence,
        changes=changes,
    )


def rfc3339(moment: float) -> str:
    """UNIX seconds as the router writes its timestamps (``2025-01-01T12:00:00Z``)."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
