"""The run store: one conformance suite run against every backend (SQLite file; PostgreSQL when a server
binary and psycopg are present), then SQLite's own failure modes (corrupt file, locked file, bad URL)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from assay.errors import AssayError
from assay.history.records import CandidateRecord, EvaluationRow, EventRecord, RunRecord, candidate_id
from assay.history.store import RunStore, StoreError
from tests.layers import e2e_fixture
from tests.pg import create_database, running_postgres


@pytest.fixture(scope="module")
@e2e_fixture("a PostgreSQL server")
def pg_server() -> Iterator[str]:
    """A throwaway PostgreSQL server on 127.0.0.1 and a random port; yields its base URL (no database)."""
    with running_postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.e2e)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL of an empty database on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store' / 'run.db'}"
    return create_database(request.getfixturevalue("pg_server"))


@pytest.fixture
def store(store_url: str) -> Iterator[RunStore]:
    with RunStore(store_url) as opened:
        yield opened


def _run(run_id: str = "r1", created: str = "2025-01-01T00:00:00+00:00") -> RunRecord:
    config = {"preset": "quick", "tiers": {"l3_every": 5}, "paths": ["prompt.md"]}
    return RunRecord(
        run_id=run_id, created=created, branch=f"assay/{run_id}", base_commit="a" * 40, config=config
    )


def _candidate(n: int, run_id: str = "r1", **overrides: object) -> CandidateRecord:
    fields: dict[str, object] = {
        "run_id": run_id,
        "generation": n,
        "candidate_id": candidate_id(n),
        "commit": f"{n:040d}",
        "parent": candidate_id(n - 1) if n else None,
        "layer": 2,
        "proposer": "llm",
        "description": "reword the greeting — ünïcode",
        "decision": "keep",
        "dev_score": 0.5,
        "dev_pass_rate": 0.4,
        "delta": 0.0625,
        "tokens": 12_000_000_000,
        "cost_usd": 0.0123,
        "seconds": 1.5,
        "time": "2025-01-01T00:00:00+00:00",
        "gate": {
            "progress": {"passed": True, "detail": "better", "numbers": {"before": 0.4, "after": 0.5}},
            "cost": {"passed": True, "detail": "within budget"},
        },
        "regressions": ["c3"],
        "evidence": ["traces/gen-001/c3.json"],
        "citations": ["traces/gen-000/c1.json"],
        "flags": ["many-files"],
    }
    fields.update(overrides)
    return CandidateRecord.model_validate(fields)


def _event(seq: int, run_id: str = "r1", kind: str = "proposal") -> EventRecord:
    data = {"seq": seq, "nested": {"ok": True}}
    return EventRecord(run_id=run_id, seq=seq, time="2025-01-01T00:00:00+00:00", kind=kind, data=data)


# --- conformance suite: every backend -------------------------------------------------------------------


def test_run_round_trip_and_repeated_create(store: RunStore) -> None:
    run = _run()
    store.create_run(run)
    store.create_run(run)
    assert store.get_run("r1") == run
    assert store.get_run("missing") is None
    with pytest.raises(StoreError, match="run r1 already exists"):
        store.create_run(run.model_copy(update={"branch": "other"}))


def test_list_and_update_runs(store: RunStore) -> None:
    store.create_run(_run("r2", created="2025-01-02T00:00:00+00:00"))
    store.create_run(_run("r1", created="2025-01-01T00:00:00+00:00"))
    assert [r.run_id for r in store.list_runs()] == ["r1", "r2"]
    updated = store.update_run("r2", status="stopped", stop_reason="plateau", best="cand-0004")
    assert (updated.status, updated.stop_reason, updated.best) == ("stopped", "plateau", "cand-0004")
    assert store.get_run("r2") == updated
    assert store.get_run("r1") == _run("r1")
    with pytest.raises(StoreError, match="status"):
        store.update_run("r2", status="paused")
    with pytest.raises(StoreError, match="no run nope"):
        store.update_run("nope", status="failed")
    with pytest.raises(StoreError, match="colour"):
        store.update_run("r2", colour="red")
    assert store.get_run("r2") == updated


def test_candidates_round_trip_in_generation_order(store: RunStore) -> None:
    recs = [_candidate(n) for n in (2, 0, 1)]
    recs[0] = recs[0].model_copy(update={"holdout_score": None, "commit": None, "decision": "invalid"})
    for rec in recs:
        store.add_candidate(rec)
    store.add_candidate(_candidate(0, run_id="other"))
    got = store.candidates("r1")
    assert [c.generation for c in got] == [0, 1, 2]
    assert got == sorted(recs, key=lambda c: c.generation)
    assert store.candidates("nobody") == []


def test_candidate_writes_are_idempotent(store: RunStore) -> None:
    rec = _candidate(1, decision="discard")
    store.add_candidate(rec)
    store.add_candidate(rec)
    assert store.candidates("r1") == [rec]
    revised = rec.model_copy(update={"holdout_score": 0.25, "flags": ["overfitting"]})
    store.add_candidate(revised)
    assert store.candidates("r1") == [revised]


def test_evaluations_round_trip_and_are_idempotent(store: RunStore) -> None:
    rows = [
        {
            "split": "dev",
            "case_id": "c2",
            "passed": False,
            "score": 0.25,
            "trace_path": "traces/gen-001/c2.json",
        },
        EvaluationRow(split="dev", case_id="c1", passed=True, score=1.0),
        EvaluationRow(split="holdout", case_id="h1", passed=True, score=0.75),
    ]
    store.add_evaluations("r1", "cand-0001", rows)
    store.add_evaluations("r1", "cand-0001", rows)
    store.add_evaluations("r1", "cand-0002", rows[:1])
    got = store.evaluations("r1", "cand-0001")
    assert [(e.split, e.case_id, e.passed, e.score) for e in got] == [
        ("dev", "c1", True, 1.0),
        ("dev", "c2", False, 0.25),
        ("holdout", "h1", True, 0.75),
    ]
    assert got[1].trace_path == "traces/gen-001/c2.json" and got[0].trace_path is None
    assert len(store.evaluations("r1", "cand-0002")) == 1


def test_events_are_ordered_filtered_and_idempotent(store: RunStore) -> None:
    assert store.last_event_seq("r1") == 0
    for seq in (3, 1, 2):
        store.add_event(_event(seq))
    store.add_event(_event(2))
    store.add_event(_event(1, run_id="r2"))
    got = store.events("r1")
    assert [e.seq for e in got] == [1, 2, 3]
    assert got[0] == _event(1) and got[0].data == {"seq": 1, "nested": {"ok": True}}
    assert [e.seq for e in store.events("r1", after_seq=2)] == [3]
    assert store.last_event_seq("r1") == 3 and store.last_event_seq("r2") == 1
    with pytest.raises(StoreError, match="event 2 of run r1 is already recorded"):
        store.add_event(_event(2, kind="decision"))
    assert store.events("r1")[1].kind == "proposal"


def test_data_survives_reopen_and_a_second_writer(store_url: str) -> None:
    with RunStore(store_url) as first:
        first.create_run(_run())
        first.add_candidate(_candidate(1))
        first.add_event(_event(1))
    with RunStore(store_url) as second, RunStore(store_url) as third:
        second.add_candidate(_candidate(1))
        third.add_event(_event(1))
        assert second.get_run("r1") == _run()
        assert third.candidates("r1") == [_candidate(1)]
        assert [e.seq for e in second.events("r1")] == [1]


def test_concurrent_writers_of_the_same_records_do_not_collide(store_url: str) -> None:
    stores = [RunStore(store_url, busy_timeout=30) for _ in range(3)]

    def write(target: RunStore) -> None:
        for n in range(15):
            target.add_candidate(_candidate(n))
            target.add_event(_event(n + 1))
            target.add_evaluations(
                "r1", candidate_id(n), [EvaluationRow(split="dev", case_id="c", passed=True, score=1)]
            )

    try:
        with ThreadPoolExecutor(len(stores)) as pool:
            list(pool.map(write, stores))
        assert [c.generation for c in stores[0].candidates("r1")] == list(range(15))
        assert [e.seq for e in stores[1].events("r1")] == list(range(1, 16))
        assert len(stores[2].evaluations("r1", candidate_id(14))) == 1
    finally:
        for opened in stores:
            opened.close()


# --- SQLite specifics -----------------------------------------------------------------------------------


def _one_line_store_error(err: pytest.ExceptionInfo[StoreError], path: Path, words: str) -> None:
    message = str(err.value)
    assert isinstance(err.value, AssayError)
    assert str(path) in message and words in message and "\n" not in message
    assert "sqlalche.me" not in message and "SQL:" not in message


def test_sqlite_uses_wal_and_creates_the_folder(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "run.db"
    with RunStore(f"sqlite:///{path}") as store:
        store.add_event(_event(1))
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
            store.add_event(_event(1))
        _one_line_store_error(err, path, "locked")
        other.execute("ROLLBACK")
        store.add_event(_event(1))
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
