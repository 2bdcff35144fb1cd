"""The reads and writes of one feedback batch: portable SQLAlchemy statements, or on PostgreSQL one statement
for the reads and one for the writes.

A batch reads three things (the variants it names, its rating rows locked for update, the events of its
idempotency keys) and writes three (new category rows, the changed rows, the events). Through SQLAlchemy each is
a statement of its own. Under load on PostgreSQL the writer thread then spent about as much CPU per feedback as
the whole HTTP request did, much of it in the driver's work per statement (about 35 µs a round trip here): so
there the rows are locked and the variants read by one join, and the three writes are one statement
(data-modifying ``WITH``). Sending the statements in psycopg's pipeline mode instead cost more CPU, not less.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

import sqlalchemy as sa

from assay.serve.tables import EVENTS, RATINGS, VARIANTS

Key = tuple[str, str]  # (variant, category); category "" is the global rating
Row = dict[str, Any]
Records = Sequence[Row]
Read = tuple[dict[str, Row], dict[Key, Row], dict[str, Row]]  # variants by name, rating rows, events by key
COUNTS = ("wins", "losses", "ties", "comparisons", "feedback")

_ROW = (RATINGS.c.variant == sa.bindparam("v")) & (RATINGS.c.category == sa.bindparam("c"))
_UPDATE = (
    RATINGS.update()
    .where(_ROW)
    .values(
        rating=sa.bindparam("r"), updated=sa.bindparam("t"), **{c: sa.bindparam(f"n_{c}") for c in COUNTS}
    )
)
_LOCK_MANY = (
    sa.select(RATINGS)
    .where(sa.tuple_(RATINGS.c.variant, RATINGS.c.category).in_(sa.bindparam("pairs", expanding=True)))
    .order_by(RATINGS.c.category, RATINGS.c.variant)
    .with_for_update()
)
_VARIANTS = sa.select(VARIANTS).where(VARIANTS.c.name.in_(sa.bindparam("names", expanding=True)))
_BY_KEYS = sa.select(EVENTS).where(EVENTS.c.idempotency_key.in_(sa.bindparam("keys", expanding=True)))
_INSERT_EVENT = EVENTS.insert().returning(EVENTS.c.id, sort_by_parameter_order=True)

_RATING_COLUMNS = [c.name for c in RATINGS.c]
_EVENT_COLUMNS = [c.name for c in EVENTS.c if c.name != "id"]
_PG_VARIANTS = f"SELECT name, categories FROM {VARIANTS.name} WHERE name = ANY(%s::text[])"
_PG_BY_KEYS = f"SELECT * FROM {EVENTS.name} WHERE idempotency_key = ANY(%s::text[])"


class BatchStore(Protocol):
    """Where a batch's rows come from and go to, inside the caller's write transaction."""

    def read(self, names: Sequence[str], keys: Sequence[Key], idempotency_keys: Sequence[str]) -> Read:
        """The variants named (by name), the rating rows of ``keys`` that exist (locked, in one global order:
        category, then name), and the stored events of ``idempotency_keys`` (by key)."""
        ...

    def lock(self, keys: Sequence[Key]) -> dict[Key, Row]:
        """The rating rows of ``keys`` that exist, locked in the same global order."""
        ...

    def write(self, created: Records, updates: Records, events: Records) -> list[int]:
        """Insert ``created`` rating rows, apply ``updates`` (``v``, ``c``, ``r``, ``t``, ``n_<count>``), insert
        ``events``; the events' ids, in order."""
        ...


def store_for(conn: sa.Connection) -> BatchStore:
    """The two-statement store on PostgreSQL (psycopg 3), the sqlite3 one on SQLite, the portable one elsewhere."""
    if conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg":
        return PostgresStore(conn)
    if conn.dialect.name == "sqlite" and conn.dialect.driver == "pysqlite":
        return SqliteStore(conn)
    return SqlStore(conn)


def _ordered(keys: Sequence[Key]) -> list[Key]:
    return sorted(set(keys), key=lambda k: (k[1], k[0]))


class SqlStore:
    """Each read and write one SQLAlchemy statement (SQLite's ``BEGIN IMMEDIATE`` already holds every lock)."""

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn

    def read(self, names: Sequence[str], keys: Sequence[Key], idempotency_keys: Sequence[str]) -> Read:
        """See :meth:`BatchStore.read`."""
        variants = {
            r["name"]: dict(r) for r in self.conn.execute(_VARIANTS, {"names": list(names)}).mappings()
        }
        rows = self.lock(keys)
        stored: dict[str, dict[str, Any]] = {}
        if idempotency_keys:
            found = self.conn.execute(_BY_KEYS, {"keys": list(idempotency_keys)}).mappings()
            stored = {r["idempotency_key"]: dict(r) for r in found}
        return variants, rows, stored

    def lock(self, keys: Sequence[Key]) -> dict[Key, Row]:
        """See :meth:`BatchStore.lock`."""
        if not keys:
            return {}
        locked = self.conn.execute(_LOCK_MANY, {"pairs": _ordered(keys)}).mappings()
        return {(r["variant"], r["category"]): dict(r) for r in locked}

    def write(self, created: Records, updates: Records, events: Records) -> list[int]:
        """See :meth:`BatchStore.write`."""
        if created:
            self.conn.execute(RATINGS.insert(), list(created))  # a race with another process is retried
        if updates:
            self.conn.execute(_UPDATE, list(updates))
        if not events:
            return []
        return [int(i) for i in self.conn.execute(_INSERT_EVENT, list(events)).scalars().all()]


class SqliteStore:
    """The portable store's statements sent through sqlite3 itself: on SQLite a batch is Python's work (the
    database answers in microseconds), and SQLAlchemy's per statement cost most of it. The transaction stays
    SQLAlchemy's (``BEGIN IMMEDIATE``); JSON columns are encoded as SQLAlchemy encodes them."""

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn
        self.db: Any = conn.connection.driver_connection

    def read(self, names: Sequence[str], keys: Sequence[Key], idempotency_keys: Sequence[str]) -> Read:
        """See :meth:`BatchStore.read`."""
        with self._errors():
            variants = {
                r["name"]: r
                for r in self._rows(
                    f"SELECT * FROM {VARIANTS.name} WHERE name IN ({_marks(len(names))})", names
                )
            }
            for row in variants.values():
                row["categories"] = _from_json(row["categories"])
            rows = self.lock(keys)
            stored: dict[str, Row] = {}
            if idempotency_keys:
                sql = (
                    f"SELECT * FROM {EVENTS.name} WHERE idempotency_key IN ({_marks(len(idempotency_keys))})"
                )
                for r in self._rows(sql, idempotency_keys):
                    r["result"] = _from_json(r["result"])
                    stored[r["idempotency_key"]] = r
        return variants, rows, stored

    def lock(self, keys: Sequence[Key]) -> dict[Key, Row]:
        """See :meth:`BatchStore.lock` (``BEGIN IMMEDIATE`` holds the database's writer lock already)."""
        pairs = _ordered(keys)
        if not pairs:
            return {}
        sql = (
            f"SELECT * FROM {RATINGS.name} WHERE (variant, category) IN "
            f"(VALUES {', '.join(['(?, ?)'] * len(pairs))}) ORDER BY category, variant"
        )
        with self._errors():
            return {(r["variant"], r["category"]): r for r in self._rows(sql, [x for p in pairs for x in p])}

    def write(self, created: Records, updates: Records, events: Records) -> list[int]:
        """See :meth:`BatchStore.write`."""
        with self._errors():
            if created:
                self.db.executemany(_SQLITE_CREATE, [[row[c] for c in _RATING_COLUMNS] for row in created])
            if updates:
                self.db.executemany(_SQLITE_UPDATE, [[u[k] for k in _UPDATE_KEYS] for u in updates])
            ids = []
            for event in events:
                values = [json.dumps(event[c]) if c == "result" else event[c] for c in _EVENT_COLUMNS]
                ids.append(int(self.db.execute(_SQLITE_EVENT, values).lastrowid))
        return ids

    def _rows(self, sql: str, values: Sequence[Any]) -> list[Row]:
        cursor = self.db.execute(sql, list(values))
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]

    def _errors(self) -> AbstractContextManager[None]:
        return _sqlite_errors(self.conn)


def _marks(count: int) -> str:
    return ", ".join(["?"] * count)


def _from_json(text: Any) -> Any:
    return json.loads(text) if isinstance(text, str) else text


_UPDATE_KEYS = ("r", "t", *(f"n_{c}" for c in COUNTS), "v", "c")
_SQLITE_CREATE = (
    f"INSERT INTO {RATINGS.name} ({', '.join(_RATING_COLUMNS)}) VALUES ({_marks(len(_RATING_COLUMNS))})"
)
_SQLITE_UPDATE = (
    f"UPDATE {RATINGS.name} SET rating = ?, updated = ?, {', '.join(f'{c} = ?' for c in COUNTS)} "
    "WHERE variant = ? AND category = ?"
)
_SQLITE_EVENT = (
    f"INSERT INTO {EVENTS.name} ({', '.join(_EVENT_COLUMNS)}) VALUES ({_marks(len(_EVENT_COLUMNS))})"
)


@contextmanager
def _sqlite_errors(conn: sa.Connection) -> Iterator[None]:
    """sqlite3's errors raised as SQLAlchemy's (a lost insert race is an IntegrityError the caller retries)."""
    import sqlite3

    try:
        yield
    except sqlite3.Error as exc:
        raise sa.exc.DBAPIError.instance(None, None, exc, sqlite3.Error, dialect=conn.dialect) from exc


class PostgresStore:
    """The rows locked and their variants read by one statement; the writes done by one statement."""

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn
        self.pg: Any = conn.connection.driver_connection

    def read(self, names: Sequence[str], keys: Sequence[Key], idempotency_keys: Sequence[str]) -> Read:
        """See :meth:`BatchStore.read`."""
        from psycopg.rows import dict_row

        with self._errors():
            rows = self.lock(keys)
            variants = {v: {"name": v, "categories": row.pop("_categories")} for (v, _), row in rows.items()}
            unseen = [n for n in names if n not in variants]
            if unseen:  # not registered, or (in a database an old assay wrote) registered with no rating row
                found = self.pg.cursor(row_factory=dict_row).execute(_PG_VARIANTS, (unseen,))
                variants.update((r["name"], r) for r in found)
            stored = {}
            if idempotency_keys:
                found = self.pg.cursor(row_factory=dict_row).execute(_PG_BY_KEYS, (list(idempotency_keys),))
                stored = {r["idempotency_key"]: r for r in found}
        return variants, rows, stored

    def lock(self, keys: Sequence[Key]) -> dict[Key, Row]:
        """See :meth:`BatchStore.lock`; each row also carries its variant's ``_categories``."""
        from psycopg.rows import dict_row

        pairs = _ordered(keys)
        if not pairs:
            return {}
        with self._errors():
            found = self.pg.cursor(row_factory=dict_row).execute(_PG_LOCK, (json.dumps(pairs),))
            return {(r["variant"], r["category"]): r for r in found}

    def write(self, created: Records, updates: Records, events: Records) -> list[int]:
        """See :meth:`BatchStore.write`."""
        if not (created or updates or events):
            return []
        # Each kind of row as one JSON document: the statement's text and parameters are the same for every
        # batch, so psycopg converts it once and the server prepares it once, whatever the batch's size.
        documents = tuple(json.dumps(list(rows)) for rows in (created, updates, events))
        with self._errors():
            done = self.pg.execute(_PG_WRITE, documents)
            # The events are inserted in the given order (ORDER BY), so their serial ids ascend in it.
            return sorted(int(row[0]) for row in done.fetchall())

    def _errors(self) -> AbstractContextManager[None]:
        return _as_sqlalchemy_errors(self.conn, self.pg)


def _pg_type(column: sa.Column[Any]) -> str:
    from sqlalchemy.dialects import postgresql

    dialect = postgresql.dialect()  # type: ignore[no-untyped-call]  # untyped in SQLAlchemy
    return str(column.type.compile(dialect=dialect))


_UPDATED = ("v", "c", "r", "t", *(f"n_{c}" for c in COUNTS))
_UPDATED_TYPES = [RATINGS.c.variant, RATINGS.c.category, RATINGS.c.rating, RATINGS.c.updated]
_UPDATED_TYPES += [RATINGS.c[c] for c in COUNTS]
# The rows of the (variant, category) pairs given as a JSON array of pairs, locked in one global order, with
# their variants' categories.
_PG_LOCK = (
    f"SELECT {', '.join(f'r.{c}' for c in _RATING_COLUMNS)}, v.categories AS _categories "
    f"FROM {RATINGS.name} r JOIN {VARIANTS.name} v ON v.name = r.variant "
    "JOIN (SELECT k->>0 AS v, k->>1 AS c FROM json_array_elements(%s::json) AS k) AS k "
    "ON r.variant = k.v AND r.category = k.c "
    "ORDER BY r.category, r.variant FOR UPDATE OF r"
)
# New rating rows, changed ones and events, each kind a JSON array of objects: the rows inserted, the changes
# applied, and the events inserted in their order (their ids returned).
_PG_WRITE = (
    f"WITH created AS (INSERT INTO {RATINGS.name} ({', '.join(_RATING_COLUMNS)}) "
    f"SELECT {', '.join(_RATING_COLUMNS)} FROM json_populate_recordset(NULL::{RATINGS.name}, %s::json)), "
    f"changed AS (UPDATE {RATINGS.name} SET rating = new.r, updated = new.t, "
    f"{', '.join(f'{c} = new.n_{c}' for c in COUNTS)} FROM json_to_recordset(%s::json) AS new("
    + ", ".join(f"{name} {_pg_type(column)}" for name, column in zip(_UPDATED, _UPDATED_TYPES, strict=True))
    + f") WHERE {RATINGS.name}.variant = new.v AND {RATINGS.name}.category = new.c) "
    f"INSERT INTO {EVENTS.name} ({', '.join(_EVENT_COLUMNS)}) SELECT {', '.join(f'e.{c}' for c in _EVENT_COLUMNS)} "
    f"FROM json_populate_recordset(NULL::{EVENTS.name}, %s::json) WITH ORDINALITY AS e "
    "ORDER BY e.ordinality RETURNING id"
)


@contextmanager
def _as_sqlalchemy_errors(conn: sa.Connection, pg: Any) -> Iterator[None]:
    """psycopg's errors raised as SQLAlchemy's (IntegrityError, OperationalError with ``connection_invalidated``),
    so the caller retries a lost race or a dropped connection as it does for SQLAlchemy's own statements."""
    import psycopg

    try:
        yield
    except psycopg.Error as exc:
        broken = bool(pg.broken or pg.closed)
        if broken:
            conn.invalidate(exc)
        raise sa.exc.DBAPIError.instance(
            None, None, exc, psycopg.Error, connection_invalidated=broken, dialect=conn.dialect
        ) from exc
