"""The SQL connection of the service: SQLite (one file, several processes) or PostgreSQL (several replicas).

Writes are serialised per row: on PostgreSQL with ``SELECT ... FOR UPDATE`` inside the transaction, on SQLite
by opening every write transaction with ``BEGIN IMMEDIATE`` (the database's single writer lock, taken before
the first read, so a read-modify-write cannot interleave with another process's). Deadlocks, serialisation
failures and a concurrent insert of the same key are retried.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa

from assay.errors import AssayError
from assay.history.store import describe_db_error
from assay.serve.tables import METADATA, add_missing_columns

T = TypeVar("T")
RETRIES = 8
# Connections kept open: as many as requests in flight under load (FastAPI's thread pool runs 40), so that a
# burst does not open and close connections (a PostgreSQL connection is a new server process; a SQLite one
# re-runs its PRAGMAs). Two replicas at the most use 80 of PostgreSQL's default 100.
POOL_SIZE = 24
POOL_OVERFLOW = 16
_SCHEMA_LOCK = 0x61737361  # 'assa'


class ServeStorageError(AssayError):
    """The service's database is unusable (bad URL, corrupt or locked file, server unreachable); one line.

    ``reason`` is the message without the database's location (what an HTTP client is told).
    """

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


class Database:
    """An engine on ``url`` with the service's tables created; ``write`` runs one atomic, retried transaction."""

    def __init__(self, url: str, *, busy_timeout: float = 10.0) -> None:
        try:
            self.url = sa.make_url(url)
        except sa.exc.ArgumentError:
            raise ServeStorageError(f"serve database: not a database URL: {url!r}") from None
        self.sqlite = self.url.get_backend_name() == "sqlite"
        database = self.url.database or ""
        on_disk = self.sqlite and database not in ("", ":memory:") and not database.startswith("file:")
        self.location = database if on_disk else self.url.render_as_string(hide_password=True)
        self._dbapi_error: type[Exception] = sa.exc.SQLAlchemyError
        self._engine: sa.Engine | None = None
        self._writer_engine: sa.Engine | None = None
        with self.guard():
            if on_disk:
                Path(database).parent.mkdir(parents=True, exist_ok=True)
            if self.sqlite:
                pool = {"pool_size": POOL_SIZE, "max_overflow": POOL_OVERFLOW} if on_disk else {}
                engine = sa.create_engine(self.url, connect_args={"timeout": busy_timeout}, **pool)
                sa.event.listen(engine, "connect", _sqlite_connect)
                sa.event.listen(engine, "begin", _sqlite_begin)
            else:
                # No pre-ping: it would cost a round trip per request. A connection the server dropped fails
                # its first statement instead; SQLAlchemy then empties the pool and the work is retried.
                engine = sa.create_engine(self.url, pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW)
            self._engine = engine
            self._dbapi_error = engine.dialect.loaded_dbapi.Error
            # The writer lock on SQLite, an advisory lock on PostgreSQL: processes starting together take
            # turns creating tables and adding columns.
            with engine.execution_options(assay_immediate=True).begin() as conn:
                if engine.dialect.name == "postgresql":
                    # Replicas starting together would race on CREATE TABLE; DDL waits for this lock instead.
                    conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_SCHEMA_LOCK})")
                METADATA.create_all(conn)
                add_missing_columns(conn)

    @property
    def engine(self) -> sa.Engine:
        """The SQLAlchemy engine (open)."""
        if self._engine is None:
            raise ServeStorageError(f"serve database {self.location}: closed", "closed")
        return self._engine

    def _writer(self) -> sa.Engine:
        """The engine whose transactions take SQLite's writer lock at ``BEGIN`` (made once: each copy of an
        engine with options costs more than a short transaction's own Python)."""
        if self._writer_engine is None:
            self._writer_engine = self.engine.execution_options(assay_immediate=True)
        return self._writer_engine

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Turn driver and SQLAlchemy errors into a one-line :class:`ServeStorageError`."""
        try:
            yield
        except ServeStorageError:
            raise
        except (sa.exc.SQLAlchemyError, self._dbapi_error, ImportError, OSError) as exc:
            reason = describe_db_error(exc)
            raise ServeStorageError(f"serve database {self.location}: {reason}", reason) from exc

    def write(self, work: Callable[[sa.Connection], T], held: HeldConnection | None = None) -> T:
        """Run ``work`` in one write transaction; retry it when it lost a race (duplicate key, deadlock) or
        its connection was found dropped before the commit (a drop during the commit is not retried: the
        transaction may have been applied). With ``held``, on that thread's kept connection."""
        for attempt in range(RETRIES):
            committing = False
            try:
                with self.guard():
                    if held is None:
                        with self._writer().begin() as conn:
                            result = work(conn)
                            committing = True
                        return result
                    conn = held.connection()
                    try:
                        with conn.begin():
                            result = work(conn)
                            committing = True
                    except BaseException:
                        held.close()  # whatever state it is in (dropped, invalidated), the next one is fresh
                        raise
                    return result
            except ServeStorageError as exc:
                cause = exc.__cause__
                if attempt == RETRIES - 1 or not _retryable(cause) or (committing and _dropped(cause)):
                    raise
                time.sleep(0.005 * (attempt + 1))
        raise AssertionError("unreachable")

    def held(self, *, reads: bool = False) -> HeldConnection:
        """A connection for one thread's successive write transactions, or with ``reads`` its reads (see
        :class:`HeldConnection`)."""
        if not reads:
            return HeldConnection(lambda: self._writer().connect())
        if self.sqlite:
            return HeldConnection(lambda: self.engine.connect())
        return HeldConnection(lambda: self.engine.connect().execution_options(isolation_level="AUTOCOMMIT"))

    def read(self, work: Callable[[sa.Connection], T], held: HeldConnection | None = None) -> T:
        """Run ``work`` on a read connection: one snapshot in SQLite's WAL; on PostgreSQL each statement in
        autocommit (a snapshot per statement, what READ COMMITTED gave inside a transaction too, without the
        BEGIN and COMMIT round trips). Retried once on a connection the server dropped. With ``held`` (from
        ``held(reads=True)``), on that thread's kept connection."""
        for attempt in range(2):
            try:
                with self.guard():
                    if held is not None:
                        conn = held.connection()
                        try:
                            with conn.begin():  # SQLite's snapshot; nothing is sent in autocommit
                                return work(conn)
                        except BaseException:
                            held.close()
                            raise
                    if self.sqlite:
                        with self.engine.begin() as conn:
                            return work(conn)
                    with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                        return work(conn)
            except ServeStorageError as exc:
                if attempt == 1 or not _dropped(exc.__cause__):
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Release the connections."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
            self._writer_engine = None


class HeldConnection:
    """One connection kept by one thread (the group-commit writer, the group reader) across its transactions:
    taking a connection from the pool and giving it back (and, for a read, setting autocommit) cost about as
    much of our CPU as the statements of a small batch or a read. Opened on first use; closed after any failure
    (the next transaction gets a fresh one) and by :meth:`close` once the thread is done."""

    def __init__(self, open_connection: Callable[[], sa.Connection]) -> None:
        self._open = open_connection
        self._conn: sa.Connection | None = None

    def connection(self) -> sa.Connection:
        """The kept connection (opened now if there is none)."""
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def close(self) -> None:
        """Give the connection back (a failed close of a broken one is nobody's concern)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()


def _dropped(exc: BaseException | None) -> bool:
    """A connection the server closed (restart, idle timeout): SQLAlchemy has discarded it and its pool."""
    return isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated


def _retryable(exc: BaseException | None) -> bool:
    if isinstance(exc, sa.exc.IntegrityError) or _dropped(exc):
        return True
    code = getattr(getattr(exc, "orig", None), "sqlstate", None)
    return code in ("40001", "40P01")  # serialization failure, deadlock detected


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # Transactions are begun by _sqlite_begin, not by the driver, so BEGIN IMMEDIATE can be chosen.
    dbapi_connection.isolation_level = None
    dbapi_connection.execute("PRAGMA journal_mode = WAL")
    dbapi_connection.execute("PRAGMA synchronous = NORMAL")


def _sqlite_begin(conn: sa.Connection) -> None:
    immediate = conn.get_execution_options().get("assay_immediate", False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
