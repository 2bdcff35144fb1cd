"""The run store: runs, candidates, evaluations and events in any SQL database SQLAlchemy reaches.

SQLite (``sqlite:///path/run.db``) is the default; the same code serves ``postgresql+psycopg://...``. Only
portable SQL is used: upserts are select-then-write inside one transaction, retried once if a concurrent
writer inserted the same key first, and dicts and lists are stored as JSON text.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

import sqlalchemy as sa
from pydantic import BaseModel, ValidationError

from assay.errors import AssayError
from assay.history.records import CandidateRecord, EvaluationRow, EventRecord, RunRecord

T = TypeVar("T")


class StoreError(AssayError):
    """The run store cannot do what was asked (corrupt, locked or unreachable database, conflicting write);
    the message is one line naming the database."""


class _JSONText(sa.TypeDecorator[Any]):
    """JSON kept in a TEXT column, which every backend has."""

    impl = sa.Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> str | None:
        return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        return None if value is None else json.loads(value)


def _column(name: str, annotation: Any, key: bool) -> sa.Column[Any]:
    nullable = False
    if get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation):
        nullable = True
        annotation = next(arg for arg in get_args(annotation) if arg is not type(None))
    origin = get_origin(annotation) or annotation
    kind: sa.types.TypeEngine[Any]
    if annotation is str:
        kind = sa.String(255) if key else sa.Text()
    elif origin in (dict, list) or (isinstance(origin, type) and issubclass(origin, BaseModel)):
        kind = _JSONText()
    elif origin is Literal:
        kind = sa.String(32)
    elif annotation is bool:
        kind = sa.Boolean()
    elif annotation is int:
        kind = sa.BigInteger()
    elif annotation is float:
        kind = sa.Double()
    else:
        kind = sa.Text()
    return sa.Column(name, kind, primary_key=key, nullable=nullable)


def _table(metadata: sa.MetaData, name: str, model: type[BaseModel], keys: tuple[str, ...]) -> sa.Table:
    """A table whose columns mirror the record's fields, so store and records cannot drift apart."""
    lead = [_column(k, str, True) for k in keys if k not in model.model_fields]
    rest = [_column(n, f.annotation, n in keys) for n, f in model.model_fields.items()]
    return sa.Table(name, metadata, *lead, *rest)


METADATA = sa.MetaData()
RUNS = _table(METADATA, "runs", RunRecord, ("run_id",))
CANDIDATES = _table(METADATA, "candidates", CandidateRecord, ("run_id", "candidate_id"))
EVALUATIONS = _table(METADATA, "evaluations", EvaluationRow, ("run_id", "candidate_id", "split", "case_id"))
EVENTS = _table(METADATA, "events", EventRecord, ("run_id", "seq"))
sa.Index("ix_candidates_generation", CANDIDATES.c.run_id, CANDIDATES.c.generation)


def _add_missing_columns(engine: sa.Engine) -> None:
    """Add the columns a later version of a record brought to tables an earlier version created (nullable:
    rows written before read them as None, and the record's default applies)."""
    inspector = sa.inspect(engine)
    with engine.begin() as conn:
        for table in METADATA.sorted_tables:
            have = {column["name"] for column in inspector.get_columns(table.name)}
            for column in table.columns:
                if column.name not in have:
                    kind = column.type.compile(dialect=engine.dialect)
                    preparer = engine.dialect.identifier_preparer
                    conn.execute(
                        sa.text(
                            f"ALTER TABLE {preparer.quote(table.name)} "
                            f"ADD COLUMN {preparer.quote(column.name)} {kind}"
                        )
                    )


class RunStore:
    """Runs, candidates, evaluations and events of assay runs in one database.

    Every write is one transaction. Writing the same candidate or evaluation again replaces it with the same
    values (idempotent); writing an event whose ``(run_id, seq)`` exists is a no-op when the content matches
    and a :class:`StoreError` when it differs. Database failures raise :class:`StoreError`, a one-line message
    naming ``location`` (the SQLite file, or the URL without its password). ``busy_timeout`` is how long a
    SQLite write waits for another writer's lock before giving up.
    """

    def __init__(self, url: str, *, busy_timeout: float = 5.0) -> None:
        try:
            self.url = sa.make_url(url)
        except sa.exc.ArgumentError:
            raise StoreError(f"run store: not a database URL: {url!r}") from None
        sqlite = self.url.get_backend_name() == "sqlite"
        database = self.url.database or ""
        on_disk = sqlite and database not in ("", ":memory:") and not database.startswith("file:")
        self.location = database if on_disk else self.url.render_as_string(hide_password=True)
        self._dbapi_error: type[Exception] = sa.exc.SQLAlchemyError
        try:
            with self._guard():
                if on_disk:
                    Path(database).parent.mkdir(parents=True, exist_ok=True)
                connect_args = {"timeout": busy_timeout} if sqlite else {}
                self._engine = sa.create_engine(self.url, connect_args=connect_args)
                self._dbapi_error = self._engine.dialect.loaded_dbapi.Error
                if sqlite:
                    sa.event.listen(self._engine, "connect", _sqlite_wal)
                METADATA.create_all(self._engine)
                _add_missing_columns(self._engine)
        except StoreError:
            self.close()
            raise

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except (sa.exc.SQLAlchemyError, self._dbapi_error, ImportError, OSError) as exc:
            raise StoreError(f"run store {self.location}: {describe_db_error(exc)}") from exc

    def _write(self, work: Callable[[sa.Connection], T]) -> T:
        with self._guard():
            try:
                with self._engine.begin() as conn:
                    return work(conn)
            except sa.exc.IntegrityError:
                # Another writer inserted the same key between our select and insert; the retry sees its row.
                with self._engine.begin() as conn:
                    return work(conn)

    def _read(self, query: sa.Select[Any]) -> list[dict[str, Any]]:
        with self._guard(), self._engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    @staticmethod
    def _upsert(conn: sa.Connection, table: sa.Table, values: dict[str, Any]) -> None:
        """Insert ``values``, or overwrite the row with the same primary key."""
        where = sa.and_(*(col == values[col.name] for col in table.primary_key.columns))
        if conn.execute(sa.select(*table.primary_key.columns).where(where)).first() is None:
            conn.execute(table.insert().values(**values))
        else:
            conn.execute(table.update().where(where).values(**values))

    def create_run(self, rec: RunRecord) -> None:
        """Record a new run; creating the same run again is a no-op, a different one with its id an error."""

        def work(conn: sa.Connection) -> None:
            old = conn.execute(sa.select(RUNS).where(RUNS.c.run_id == rec.run_id)).first()
            if old is None:
                conn.execute(RUNS.insert().values(**rec.model_dump()))
            elif RunRecord.load(dict(old._mapping)) != rec:
                raise StoreError(f"run store {self.location}: run {rec.run_id} already exists")

        self._write(work)

    def update_run(self, run_id: str, **fields: Any) -> RunRecord:
        """Change fields of a run (``status=``, ``stop_reason=``, ``best=`` ...) and return the updated run."""
        unknown = sorted(set(fields) - set(RunRecord.model_fields) | ({"run_id"} & set(fields)))
        if unknown:
            raise StoreError(f"run store {self.location}: cannot update run field(s) {', '.join(unknown)}")

        def work(conn: sa.Connection) -> RunRecord:
            old = conn.execute(sa.select(RUNS).where(RUNS.c.run_id == run_id)).first()
            if old is None:
                raise StoreError(f"run store {self.location}: no run {run_id}")
            try:
                new: RunRecord = RunRecord.load({**dict(old._mapping), **fields})
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(part) for part in first["loc"])
                raise StoreError(
                    f"run store {self.location}: run {run_id}: {where}: {first['msg']}"
                ) from None
            conn.execute(RUNS.update().where(RUNS.c.run_id == run_id).values(**new.model_dump()))
            return new

        return self._write(work)

    def get_run(self, run_id: str) -> RunRecord | None:
        """The run with this id, or None."""
        rows = self._read(sa.select(RUNS).where(RUNS.c.run_id == run_id))
        return RunRecord.load(rows[0]) if rows else None

    def list_runs(self) -> list[RunRecord]:
        """All runs, oldest first."""
        rows = self._read(sa.select(RUNS).order_by(RUNS.c.created, RUNS.c.run_id))
        return [RunRecord.load(row) for row in rows]

    def add_candidate(self, rec: CandidateRecord) -> None:
        """Record a candidate (or overwrite the one with the same run and candidate id)."""
        self._write(lambda conn: self._upsert(conn, CANDIDATES, rec.model_dump()))

    def candidates(self, run_id: str) -> list[CandidateRecord]:
        """The candidates of a run, by generation."""
        query = (
            sa.select(CANDIDATES)
            .where(CANDIDATES.c.run_id == run_id)
            .order_by(CANDIDATES.c.generation, CANDIDATES.c.candidate_id)
        )
        return [CandidateRecord.load(row) for row in self._read(query)]

    def add_evaluations(
        self, run_id: str, candidate_id: str, rows: Iterable[EvaluationRow | Mapping[str, Any]]
    ) -> None:
        """Record per-case results of a candidate in one transaction; a (split, case) seen before is replaced."""
        parsed = [row if isinstance(row, EvaluationRow) else EvaluationRow.load(dict(row)) for row in rows]

        def work(conn: sa.Connection) -> None:
            for row in parsed:
                values = {"run_id": run_id, "candidate_id": candidate_id, **row.model_dump()}
                self._upsert(conn, EVALUATIONS, values)

        self._write(work)

    def evaluations(self, run_id: str, candidate_id: str) -> list[EvaluationRow]:
        """Per-case results of one candidate, by split and case id."""
        query = (
            sa.select(EVALUATIONS)
            .where(EVALUATIONS.c.run_id == run_id, EVALUATIONS.c.candidate_id == candidate_id)
            .order_by(EVALUATIONS.c.split, EVALUATIONS.c.case_id)
        )
        return [EvaluationRow.load(row) for row in self._read(query)]

    def add_event(self, rec: EventRecord) -> None:
        """Append an event; the same event again is a no-op, another event with the same seq an error."""

        def work(conn: sa.Connection) -> None:
            where = sa.and_(EVENTS.c.run_id == rec.run_id, EVENTS.c.seq == rec.seq)
            old = conn.execute(sa.select(EVENTS).where(where)).first()
            if old is None:
                conn.execute(EVENTS.insert().values(**rec.model_dump()))
                return
            stored = EventRecord.load(dict(old._mapping))
            if (stored.kind, stored.data) != (rec.kind, rec.data):
                raise StoreError(
                    f"run store {self.location}: event {rec.seq} of run {rec.run_id} is already "
                    f"recorded as {stored.kind!r}, refusing to overwrite it with {rec.kind!r}"
                )

        self._write(work)

    def events(self, run_id: str, after_seq: int = 0) -> list[EventRecord]:
        """The events of a run with ``seq > after_seq``, in order."""
        query = (
            sa.select(EVENTS)
            .where(EVENTS.c.run_id == run_id, EVENTS.c.seq > after_seq)
            .order_by(EVENTS.c.seq)
        )
        return [EventRecord.load(row) for row in self._read(query)]

    def last_event_seq(self, run_id: str) -> int:
        """The highest event seq of a run, 0 when it has none."""
        rows = self._read(sa.select(sa.func.max(EVENTS.c.seq).label("seq")).where(EVENTS.c.run_id == run_id))
        return int(rows[0]["seq"] or 0)

    def close(self) -> None:
        """Release the database connections."""
        engine = getattr(self, "_engine", None)
        if engine is not None:
            engine.dispose()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _sqlite_wal(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers (assay status, the report) work while the loop writes; the busy timeout is the
    # driver's ``timeout`` connect argument.
    dbapi_connection.execute("PRAGMA journal_mode = WAL")


def describe_db_error(exc: BaseException) -> str:
    """The first line of the driver's own message, without SQLAlchemy's statement dump and links, with a hint
    for corrupt and locked SQLite files (shared by the run store and ``assay serve``)."""
    inner = getattr(exc, "orig", None) or exc
    text = str(inner).strip().splitlines()
    message = text[0] if text else type(inner).__name__
    if "not a database" in message or "malformed" in message:
        message += " (the file is corrupt; move it away to start afresh)"
    elif "locked" in message:
        message += " (another process holds a lock on it)"
    return message
