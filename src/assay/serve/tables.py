"""The service's SQL tables: variants, one rating row per (variant, category), and the feedback event log.

The global rating of a variant is the row whose category is ``""``. Times are UNIX seconds (floats).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

GLOBAL = ""
NAME_LENGTH = 200
CATEGORY_LENGTH = 100
FEEDBACK_TYPE_LENGTH = 64

METADATA = sa.MetaData()

VARIANTS = sa.Table(
    "serve_variants",
    METADATA,
    sa.Column("name", sa.String(NAME_LENGTH), primary_key=True),
    sa.Column("cost_per_1m", sa.Double(), nullable=False, default=0.0),
    sa.Column("description", sa.Text(), nullable=False, default=""),
    sa.Column("categories", sa.JSON(), nullable=True),
    sa.Column("created", sa.Double(), nullable=False),
)

RATINGS = sa.Table(
    "serve_ratings",
    METADATA,
    sa.Column("variant", sa.String(NAME_LENGTH), primary_key=True),
    sa.Column("category", sa.String(CATEGORY_LENGTH), primary_key=True),
    sa.Column("rating", sa.Double(), nullable=False),
    sa.Column("prior", sa.Double(), nullable=False),
    sa.Column("wins", sa.BigInteger(), nullable=False, default=0),
    sa.Column("losses", sa.BigInteger(), nullable=False, default=0),
    sa.Column("ties", sa.BigInteger(), nullable=False, default=0),
    sa.Column("comparisons", sa.BigInteger(), nullable=False, default=0),
    sa.Column("feedback", sa.BigInteger(), nullable=False, default=0),
    sa.Column("updated", sa.Double(), nullable=False),
)

EVENTS = sa.Table(
    "serve_feedback_events",
    METADATA,
    sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
    sa.Column("idempotency_key", sa.String(NAME_LENGTH), nullable=True, unique=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("time", sa.Double(), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("winner", sa.String(NAME_LENGTH), nullable=True),
    sa.Column("loser", sa.String(NAME_LENGTH), nullable=True),
    sa.Column("category", sa.String(CATEGORY_LENGTH), nullable=True),
    sa.Column("confidence", sa.Double(), nullable=False),
    sa.Column("query", sa.Text(), nullable=True),
    sa.Column("user_id", sa.String(NAME_LENGTH), nullable=True),
    sa.Column("session_id", sa.String(NAME_LENGTH), nullable=True),
    sa.Column("result", sa.JSON(), nullable=False),
    sa.Column("response", sa.Text(), nullable=True),
    sa.Column("conversation_id", sa.String(NAME_LENGTH), nullable=True),
    sa.Column("feedback_type", sa.String(FEEDBACK_TYPE_LENGTH), nullable=True),
    sa.Column("client_time", sa.Double(), nullable=True),
)
sa.Index("ix_serve_feedback_time", EVENTS.c.time)


def add_missing_columns(conn: sa.Connection) -> list[str]:
    """Add the columns a newer assay declares to tables an older one created (all nullable); their names."""
    inspector = sa.inspect(conn)
    added = []
    for table in METADATA.sorted_tables:
        present = {column["name"] for column in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in present:
                continue
            kind = column.type.compile(dialect=conn.dialect)
            conn.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}")
            added.append(f"{table.name}.{column.name}")
    return added


def insert_ignore(conn: sa.Connection, table: sa.Table, values: dict[str, Any]) -> bool:
    """Insert a row unless its key exists (``ON CONFLICT DO NOTHING``); True when a row was inserted."""
    name = conn.dialect.name
    if name == "postgresql":
        statement: Any = postgresql.insert(table).values(**values).on_conflict_do_nothing()
    elif name == "sqlite":
        statement = sqlite.insert(table).values(**values).on_conflict_do_nothing()
    else:
        where = sa.and_(*(col == values[col.name] for col in table.primary_key.columns))
        if conn.execute(sa.select(*table.primary_key.columns).where(where)).first() is not None:
            return False
        statement = table.insert().values(**values)
    return bool(conn.execute(statement).rowcount)
