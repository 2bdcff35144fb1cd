"""Feedback applied inside one write transaction: lock the rating rows, update them, log the events.

A batch of feedbacks (see :mod:`assay.serve.group_commit`) locks its rows with one statement in one global
order (every global row by name, then every category row by category and name), so two transactions never wait
on each other in a cycle. On PostgreSQL the lock is ``SELECT ... FOR UPDATE``; on SQLite the whole write
transaction already holds the database's writer lock (``BEGIN IMMEDIATE``). Statements are built once at
import: building them per request cost more than running them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from assay.serve.batch_store import COUNTS as _COUNTS
from assay.serve.batch_store import BatchStore, Key, store_for
from assay.serve.errors import ApiError
from assay.serve.schemas import FeedbackOut, RatingChange
from assay.serve.scoring import decayed, elo_pairwise, elo_single
from assay.serve.settings import ServeSettings
from assay.serve.tables import GLOBAL, RATINGS, VARIANTS, insert_ignore
from assay.serve.validation import Feedback

_ROW = (RATINGS.c.variant == sa.bindparam("v")) & (RATINGS.c.category == sa.bindparam("c"))
_LOCK = sa.select(RATINGS).where(_ROW).with_for_update()
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


def _lock(conn: sa.Connection, variant: str, category: str) -> dict[str, Any]:
    """The row, locked for this transaction."""
    row = conn.execute(_LOCK, {"v": variant, "c": category}).mappings().first()
    if row is None:
        raise LookupError(f"no rating row for {variant!r} in {category!r}")
    return dict(row)


def _refusals(
    settings: ServeSettings, batch: Sequence[Feedback], known: dict[str, dict[str, Any]]
) -> tuple[list[ApiError | None], list[str]]:
    """Each feedback's refusal for its variants (unknown, or not serving its category), or None; and the unknown
    variants that the feedbacks not refused may register on first mention."""
    refusals: list[ApiError | None] = []
    new: dict[str, None] = {}
    for fb in batch:
        refusal = None
        for name in fb.names:
            row = known.get(name)
            if row is None and settings.unknown_variants == "reject" and not fb.register:
                refusal = ApiError(
                    "unknown_variant",
                    f"unknown variant {name!r} (register it with PUT /api/v1/variants/{{name}})",
                    variant=name,
                )
            elif (
                row is not None
                and fb.category is not None
                and row["categories"] is not None
                and fb.category not in row["categories"]
            ):
                refusal = ApiError(
                    "category_conflict",
                    f"variant {name!r} serves categories {row['categories']}, not {fb.category!r}",
                    variant=name,
                )
            if refusal is not None:
                break
        refusals.append(refusal)
        if refusal is None:
            new.update((n, None) for n in fb.names if n not in known)
    return refusals, list(new)


def _stored_answer(row: dict[str, Any], fb: Feedback) -> FeedbackOut:
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


class _Rows:
    """The locked rating rows of one batch, changed in memory and written back once."""

    def __init__(self, settings: ServeSettings, rows: dict[Key, dict[str, Any]], now: float) -> None:
        self.settings = settings
        self.now = now
        self.rows = rows
        self.created: set[Key] = set()
        self.changed: set[Key] = set()

    def value(self, key: Key) -> float:
        """The row's rating now (decayed since its last update)."""
        row = self.rows[key]
        return decayed(row["rating"], row["prior"], self.now - row["updated"], self.settings.decay_half_life)

    def category_row(self, variant: str, category: str) -> None:
        """Create a category row in memory when missing, starting from the variant's global rating now."""
        if (variant, category) not in self.rows:
            start = self.value((variant, GLOBAL))
            self.rows[variant, category] = {
                "variant": variant,
                "category": category,
                "rating": start,
                "prior": start,
                "updated": self.now,
                **dict.fromkeys(_COUNTS, 0),
            }
            self.created.add((variant, category))

    def write(self, store: BatchStore, events: Sequence[dict[str, Any]]) -> list[int]:
        """Insert the created rows, update the changed ones and insert ``events``; the events' ids."""
        created = [self.rows[k] for k in sorted(self.created)]
        updates = [
            {"v": v, "c": c, "r": self.rows[v, c]["rating"], "t": self.now}
            | {f"n_{n}": self.rows[v, c][n] for n in _COUNTS}
            for v, c in sorted(self.changed - self.created)
        ]
        return store.write(created, updates, events)


def _level(rows: _Rows, settings: ServeSettings, fb: Feedback, category: str) -> list[RatingChange]:
    """Apply ``fb`` to one level (global, or its category) and say how the ratings moved."""
    k = settings.k * fb.confidence
    before = {n: rows.value((n, category)) for n in fb.names}
    after = dict(before)
    if fb.winner is not None and fb.loser is not None:
        outcome = None if fb.kind == "tie" else "a"
        after[fb.winner], after[fb.loser] = elo_pairwise(before[fb.winner], before[fb.loser], outcome, k)
    else:
        name = fb.names[0]
        after[name] = elo_single(before[name], fb.winner is not None, k)
    changes = []
    for name in fb.names:
        row = rows.rows[name, category]
        row["rating"], row["updated"] = after[name], rows.now
        row["feedback"] += 1
        if fb.winner is not None and fb.loser is not None:
            row["comparisons"] += 1
            row["ties" if fb.kind == "tie" else "wins" if name == fb.winner else "losses"] += 1
        rows.changed.add((name, category))
        changes.append(
            RatingChange(variant=name, category=category or None, before=before[name], after=after[name])
        )
    return changes


def apply_batch(
    conn: sa.Connection, settings: ServeSettings, batch: Sequence[Feedback], now: float
) -> list[FeedbackOut | ApiError]:
    """Apply feedbacks in order in one transaction, each answered alone: its result, or its refusal.

    The rows every feedback touches are locked at once; the ratings move in memory in the batch's order
    and are written back with one statement per kind, so a batch costs a handful of round trips however
    large it is (group commit). A retried idempotency key returns the first answer.
    """
    store = store_for(conn)
    names = sorted({n for fb in batch for n in fb.names})
    # Every row the batch may touch, read and locked before anything is decided (a refused feedback's rows too:
    # locking them costs nothing, and it saves a round trip).
    keys = {(n, GLOBAL) for n in names} | {(n, fb.category) for fb in batch if fb.category for n in fb.names}
    wanted = sorted({key for fb in batch if (key := fb.idempotency_key) is not None})
    known, locked, stored = store.read(names, sorted(keys), wanted)
    refusals, new = _refusals(settings, batch, known)
    answers: list[FeedbackOut | ApiError | None] = list(refusals)
    live = [i for i, a in enumerate(answers) if a is None]
    if not live:
        return answers  # type: ignore[return-value]
    for name in new:
        values = {"name": name, "cost_per_1m": 0.0, "description": "", "categories": None, "created": now}
        insert_ignore(conn, VARIANTS, values)
    # Registration creates the global row, so a known variant lacks one only in a database an old assay wrote;
    # locking it after the others can deadlock with another replica, and a deadlock is retried.
    missing = sorted({n for i in live for n in batch[i].names if (n, GLOBAL) not in locked})
    if missing:
        for name in missing:
            ensure_row(conn, name, GLOBAL, settings.start, now)
        locked.update(store.lock([(n, GLOBAL) for n in missing]))
    rows = _Rows(settings, locked, now)
    events, numbered = [], []
    stamp = rfc3339(now)
    first_use: dict[str, int] = {}  # idempotency key -> the feedback of this batch that used it
    repeats: list[tuple[int, int]] = []
    for i in live:
        fb = batch[i]
        key = fb.idempotency_key
        if key is not None and key in stored:
            try:
                answers[i] = _stored_answer(stored[key], fb)
            except ApiError as refusal:
                answers[i] = refusal
            continue
        if key is not None and key in first_use:
            j = first_use[key]
            if batch[j].fingerprint != fb.fingerprint:
                answers[i] = ApiError(
                    "idempotency_conflict", f"idempotency key {key!r} was already used for different feedback"
                )
            else:
                repeats.append((i, j))
            continue
        if fb.category is not None:  # a new category row starts where the global rating was before
            for name in fb.names:
                rows.category_row(name, fb.category)
        changes = _level(rows, settings, fb, GLOBAL)
        if fb.category is not None:
            changes += _level(rows, settings, fb, fb.category)
        events.append(_event(fb, changes, now))
        numbered.append(i)
        answers[i] = FeedbackOut(
            timestamp=stamp,
            event_id=0,
            kind=fb.kind,
            category=fb.category,
            confidence=fb.confidence,
            changes=changes,
        )
        if key is not None:
            first_use[key] = i
    ids = rows.write(store, events)
    for i, event_id in zip(numbered, ids, strict=True):
        answer = answers[i]
        assert isinstance(answer, FeedbackOut)
        answer.event_id = event_id
    for i, j in repeats:  # a key used twice in one batch: the second is a retry of the first
        first = answers[j]
        assert isinstance(first, FeedbackOut)
        answers[i] = first.model_copy(update={"duplicate": True})
    return answers  # type: ignore[return-value]


def _event(fb: Feedback, changes: list[RatingChange], now: float) -> dict[str, Any]:
    return {
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
        "result": {
            "changes": [
                {"variant": c.variant, "category": c.category, "before": c.before, "after": c.after}
                for c in changes
            ]
        },
        "response": fb.response,
        "conversation_id": fb.conversation_id,
        "feedback_type": fb.feedback_type,
        "client_time": fb.client_time,
    }


def rfc3339(moment: float) -> str:
    """UNIX seconds as the router writes its timestamps (``2025-01-01T12:00:00Z``)."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
