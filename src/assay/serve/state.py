"""The service's state in SQL: variants, ratings and the feedback log, read and changed atomically.

A rating in a category falls back to the variant's global rating, then to the start rating. Reads apply the
time decay (when on) from the row's last update; writes store the decayed value before applying feedback.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import sqlalchemy as sa

from assay.ratings.base import confidence
from assay.serve import feedback as feedback_ops
from assay.serve.database import Database, HeldConnection
from assay.serve.errors import ApiError
from assay.serve.group_commit import GroupCommit
from assay.serve.group_read import GroupRead
from assay.serve.router_ratings import RouterRating
from assay.serve.schemas import FeedbackOut, RatingOut, VariantIn, VariantOut
from assay.serve.scoring import decayed
from assay.serve.settings import ServeSettings
from assay.serve.tables import EVENTS, GLOBAL, RATINGS, VARIANTS, insert_ignore
from assay.serve.validation import Feedback, category_name, finite_in, variant_name

SEED_BASE = 1000.0
SEED_SPAN = 1000.0
# Built once: building a statement per request cost more than running it.
# Every variant with its rating rows in the wanted categories: one statement (a round trip) per selection.
_SNAPSHOT = sa.select(VARIANTS, RATINGS).select_from(
    VARIANTS.outerjoin(
        RATINGS,
        (RATINGS.c.variant == VARIANTS.c.name)
        & RATINGS.c.category.in_(sa.bindparam("wanted", expanding=True)),
    )
)
_VARIANT_COLUMNS = tuple(c.name for c in VARIANTS.c)
# Registered variants by name, and the rating rows of the categories read.
Snapshot = tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]
_RATING_COLUMNS = tuple(c.name for c in RATINGS.c)


@dataclass(frozen=True)
class Standing:
    """A variant's effective rating in one category and the counts of the row it came from."""

    name: str
    category: str | None
    rating: float
    source: str
    wins: int
    losses: int
    ties: int
    comparisons: int
    cost_per_1m: float

    def out(self, min_comparisons: int, rank: int | None = None) -> RatingOut:
        """The API shape, with win rate (ties count half) and confidence."""
        decided = self.wins + self.losses + self.ties
        fields = asdict(self)
        cost = fields.pop("cost_per_1m")
        return RatingOut(
            rank=rank,
            **fields,
            win_rate=(self.wins + 0.5 * self.ties) / decided if decided else None,
            confidence=confidence(self.comparisons, min_comparisons),
            cost_per_1m_tokens=cost,
        )


class ServeState:
    """Variants, ratings and feedback of one service, in the database at ``settings.db_url``."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self.db = Database(settings.db_url, busy_timeout=settings.busy_timeout)
        self.writer = GroupCommit(self.db, settings)
        # The reader thread's reads share one connection (only that thread uses it).
        self._reads = self.db.held(reads=True)
        self.reader: GroupRead[Snapshot] = GroupRead(lambda category: self.snapshot(category, self._reads))

    def close(self) -> None:
        """Finish the queued feedback and reads, and release the database."""
        self.writer.close()
        self.reader.close()
        self._reads.close()
        self.db.close()

    def record_feedback(self, fb: Feedback) -> FeedbackOut:
        """Apply one feedback atomically and append it to the event log (once per idempotency key).

        Feedbacks arriving together are committed together (see :mod:`assay.serve.group_commit`).
        """
        return self.writer.submit(fb)

    async def record_feedback_async(self, fb: Feedback) -> FeedbackOut:
        """:meth:`record_feedback` awaited in an event loop (the HTTP endpoint), holding no thread."""
        return await self.writer.submit_async(fb)

    def register_variant(self, name: str, body: VariantIn) -> VariantOut:
        """Create or update a variant; seed category ratings at ``1000 + 1000·score`` unless already learned."""
        name = variant_name(name)
        cost = finite_in(body.cost_per_1m_tokens, 0.0, 1e12, "invalid_cost", "cost_per_1m_tokens")
        categories = None
        if body.categories is not None:
            categories = sorted({c for c in (category_name(x, "categories") for x in body.categories) if c})
        seeds: dict[str, float] = {}
        for raw, value in body.category_scores.items():
            category = category_name(raw, "category_scores")
            if category is None:
                raise ApiError("invalid_name", "category_scores: a category must not be empty")
            score = finite_in(value, 0.0, 1.0, "invalid_score", f"category_scores.{category}")
            if categories is not None and category not in categories:
                raise ApiError(
                    "category_conflict",
                    f"category_scores names {category!r}, which is not among categories {categories}",
                )
            seeds[category] = SEED_BASE + SEED_SPAN * score

        def work(conn: sa.Connection) -> VariantOut:
            now = time.time()
            values = {"cost_per_1m": cost, "description": body.description, "categories": categories}
            created = insert_ignore(conn, VARIANTS, {"name": name, "created": now, **values})
            if not created:
                conn.execute(VARIANTS.update().where(VARIANTS.c.name == name).values(**values))
            feedback_ops.ensure_row(conn, name, GLOBAL, self.settings.start, now)
            seeded, kept = {}, []
            for category, value in sorted(seeds.items()):
                if feedback_ops.seed_row(conn, name, category, value, now):
                    seeded[category] = value
                else:
                    kept.append(category)
            return VariantOut(
                name=name,
                cost_per_1m_tokens=cost,
                description=body.description,
                categories=categories,
                created=created,
                seeded=seeded,
                kept=kept,
            )

        return self.db.write(work)

    def import_ratings(self, ratings: Sequence[RouterRating]) -> tuple[int, int]:
        """Store the router's ratings (variants registered as needed) in one transaction.

        A row that feedback has already moved here is kept, as a learned rating is never overwritten by a
        static one; so importing the same file on every start changes nothing learned. Returns (set, kept).
        """

        def work(conn: sa.Connection) -> tuple[int, int]:
            now = time.time()
            done = kept = 0
            for item in ratings:
                values = {"cost_per_1m": 0.0, "description": "", "categories": None}
                insert_ignore(conn, VARIANTS, {"name": item.model, "created": now, **values})
                feedback_ops.ensure_row(conn, item.model, GLOBAL, self.settings.start, now)
                counts = {c: getattr(item, c) for c in ("wins", "losses", "ties", "comparisons")}
                category = item.category or GLOBAL
                if feedback_ops.set_row(conn, item.model, category, item.rating, counts, now):
                    done += 1
                else:
                    kept += 1
            return done, kept

        return self.db.write(work)

    def router_ratings(self) -> list[RouterRating]:
        """Every stored rating row (global and per category) as the router keeps it, read at once: the rating as
        reads give it (decayed, when decay is on) and the counts of the row."""
        rows = self.db.read(lambda conn: conn.execute(sa.select(RATINGS)).mappings().all())
        now = time.time()
        half_life = self.settings.decay_half_life
        return [
            RouterRating(
                model=row["variant"],
                category=row["category"] or None,
                rating=decayed(row["rating"], row["prior"], now - row["updated"], half_life),
                **{c: int(row[c]) for c in ("comparisons", "wins", "losses", "ties")},
            )
            for row in rows
        ]

    def variants(self) -> dict[str, dict[str, Any]]:
        """Registered variants by name: cost_per_1m, description, categories."""
        rows = self.db.read(lambda conn: conn.execute(sa.select(VARIANTS)).mappings().all())
        return {row["name"]: dict(row) for row in rows}

    def snapshot(self, category: str | None = None, held: HeldConnection | None = None) -> Snapshot:
        """Registered variants by name and the rating rows of ``category`` (and global), read together (on
        ``held``, a thread's kept read connection, when given)."""

        def work(conn: sa.Connection) -> Snapshot:
            wanted = [GLOBAL] if category is None else [GLOBAL, category]
            variants: dict[str, dict[str, Any]] = {}
            rows: list[dict[str, Any]] = []
            split = len(_VARIANT_COLUMNS)
            for row in conn.execute(_SNAPSHOT, {"wanted": wanted}):
                name = row[0]
                if name not in variants:
                    variants[name] = dict(zip(_VARIANT_COLUMNS, row[:split], strict=True))
                if row[split] is not None:  # the variant has a rating row in a wanted category
                    rows.append(dict(zip(_RATING_COLUMNS, row[split:], strict=True)))
            return variants, rows

        return self.db.read(work, held)

    async def snapshot_async(self, category: str | None = None) -> Snapshot:
        """:meth:`snapshot` awaited in an event loop, shared with the requests waiting for the same category at
        the same time (see :mod:`assay.serve.group_read`); read-only."""
        return await self.reader.get(category)

    def standings(
        self,
        category: str | None = None,
        names: list[str] | None = None,
        snapshot: Snapshot | None = None,
    ) -> list[Standing]:
        """Effective ratings in ``category`` (None: global) of ``names`` (default: every registered variant),
        from ``snapshot`` when given (see :meth:`snapshot`)."""
        variants, rating_rows = snapshot if snapshot is not None else self.snapshot(category)
        variant_rows = list(variants.values())
        costs = {v["name"]: float(v["cost_per_1m"]) for v in variant_rows}
        by_key = {(r["variant"], r["category"]): r for r in rating_rows}
        chosen = names if names is not None else sorted(costs)
        now = time.time()
        out = []
        for name in chosen:
            row, source = by_key.get((name, category)) if category else None, "category"
            if row is not None and row["feedback"] == 0:
                source = "seed"
            if row is None:
                row, source = by_key.get((name, GLOBAL)), "global"
            if row is None:
                out.append(
                    Standing(name, category, self.settings.start, "start", 0, 0, 0, 0, costs.get(name, 0.0))
                )
                continue
            value = decayed(row["rating"], row["prior"], now - row["updated"], self.settings.decay_half_life)
            counts = {c: int(row[c]) for c in ("wins", "losses", "ties", "comparisons")}
            cost = costs.get(name, 0.0)
            out.append(Standing(name, category, value, source, cost_per_1m=cost, **counts))
        return out

    def events(self, category: str | None = None) -> list[dict[str, Any]]:
        """The feedback log in order (only one category's events when given)."""
        query = sa.select(EVENTS).order_by(EVENTS.c.id)
        if category is not None:
            query = query.where(EVENTS.c.category == category)
        return [dict(row) for row in self.db.read(lambda conn: conn.execute(query).mappings().all())]

    def counts(self) -> tuple[dict[str, int], dict[str | None, int], list[dict[str, Any]]]:
        """Feedback events per kind and per ``feedback_type`` (None: none given), and every rating row."""

        def work(conn: sa.Connection) -> tuple[dict[str, int], dict[str | None, int], list[dict[str, Any]]]:
            kinds = conn.execute(sa.select(EVENTS.c.kind, sa.func.count()).group_by(EVENTS.c.kind)).all()
            types = conn.execute(
                sa.select(EVENTS.c.feedback_type, sa.func.count()).group_by(EVENTS.c.feedback_type)
            ).all()
            rows = conn.execute(sa.select(RATINGS)).mappings().all()
            return (
                {kind: int(n) for kind, n in kinds},
                {kind: int(n) for kind, n in types},
                [dict(r) for r in rows],
            )

        return self.db.read(work)
