"""The run store: its conformance suite (:mod:`assay.testing.stores`) run against every backend (SQLite file;
PostgreSQL when a server binary and psycopg are present), then SQLite's own failure modes (corrupt file, locked
file, bad URL)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.errors import AssayError
from assay.history.store import RunStore, StoreError
from assay.testing.stores import PARTS, check_run_store, event
from tests.layers import e2e_fixture
from tests.pg import create_database, running_postgres


@pytest.fixture(scope="module")
@e2e_fixture("a PostgreSQL server")
def pg_server() -> Iterator[str]:
    """A throwaway PostgreSQL server on 127.0.0.1 and a random port; yields its base URL (no database)."""
    with running_postgres() as url:
        yield url


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.e2e)])
def test_the_run_store_passes_its_suite_on_every_backend(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """:func:`assay.testing.stores.check_run_store`, each part on a new empty database: a new SQLite file, or a
    new database on the module's PostgreSQL server."""
    given: list[str] = []

    def new_url() -> str:
        if backend == "sqlite":
            given.append(f"sqlite:///{tmp_path / 'store' / f'run-{len(given)}.db'}")
        else:
            given.append(create_database(request.getfixturevalue("pg_server")))
        return given[-1]

    check_run_store(new_url)
    assert len(given) == len(PARTS) and len(set(given)) == len(given)


# --- SQLite specifics -----------------------------------------------------------------------------------


def _one_line_store_error(err: pytest.ExceptionInfo[StoreError], path: Path, words: str) -> None:
    message = str(err.value)
    assert isinstance(err.value, AssayError)
    assert str(path) in message and words in message and "\n" not in message
    assert "sqlalche.me" not in message and "SQL:" not in message


def test_sqlite_uses_wal_and_creates_the_folder(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "run.db"
    with RunStore(f"sqlite:///{path}") as store:
        store.add_event(event(1))
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_corrupt_database_file_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "run.db"
    path.write_bytes(b"this is not a database, just garbage \x00\xff" * 200)
    with pytest.raises(StoreError) as err:
        RunStore(f"sqlite:///{path}")
    _one_line_store_error(err, path, "not a database")


def test_write_to_a_locked_database_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "run.db"
    store = RunStore(f"sqlite:///{path}", busy_timeout=0.2)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StoreError) as err:
            store.add_event(event(1))
        _one_line_store_error(err, path, "locked")
        other.execute("ROLLBACK")
        store.add_event(event(1))
        assert store.last_event_seq("r1") == 1
    finally:
        other.close()
        store.close()


def test_opening_an_exclusively_locked_database_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "run.db"
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("CREATE TABLE held (x)")
        other.execute("BEGIN EXCLUSIVE")
        other.execute("INSERT INTO held VALUES (1)")
        with pytest.raises(StoreError) as err:
            RunStore(f"sqlite:///{path}", busy_timeout=0.2)
        _one_line_store_error(err, path, "locked")
    finally:
        other.close()


@pytest.mark.parametrize(
    ("url", "words"),
    [("not a url at all", "not a database URL"), ("postgresql+nosuchdriver://u@127.0.0.1/x", "nosuchdriver")],
)
def test_unusable_urls_are_one_line_errors(url: str, words: str) -> None:
    with pytest.raises(StoreError, match=words) as err:
        RunStore(url)
    assert "\n" not in str(err.value)
