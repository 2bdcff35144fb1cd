"""Group commit: a batch of feedbacks gives the ratings, answers and refusals one-by-one application gives."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from assay.serve.batch_store import PostgresStore, SqliteStore, SqlStore, store_for
from assay.serve.errors import ApiError
from assay.serve.feedback import apply_batch
from assay.serve.schemas import FeedbackIn, VariantIn
from assay.serve.settings import ServeSettings
from assay.serve.state import ServeState
from assay.serve.validation import Feedback, check_feedback
from tests.pg import create_database


def _fb(**body: Any) -> Feedback:
    return check_feedback(FeedbackIn(**body))


BATCH = [
    _fb(winner="a", loser="b", category="math"),
    _fb(winner="b", loser="c", idempotency_key="k1"),
    _fb(winner="a", loser="ghost"),  # unknown variant: refused alone
    _fb(winner="b", loser="c", idempotency_key="k1"),  # a retry inside the batch
    _fb(winner="c", loser="a", idempotency_key="k1"),  # the key reused for other content
    _fb(winner="c", loser="a", tie=True, category="math", confidence=0.5),
    _fb(loser="b"),
    _fb(winner_model="new", loser_model="a", decision_name="code"),  # the router's spelling registers "new"
    _fb(winner="a", loser="b", category="poetry"),  # b does not serve poetry
]


def _state(path: Path | str) -> ServeState:
    url = path if isinstance(path, str) else f"sqlite:///{path}"
    state = ServeState(ServeSettings(db_url=url))
    for name in ("a", "b", "c"):
        categories = ["math", "code"] if name == "b" else None
        state.register_variant(name, VariantIn(categories=categories))
    return state


def _outcome(answer: Any) -> Any:
    if isinstance(answer, ApiError):
        return ("refused", answer.code)
    return (
        answer.kind,
        answer.duplicate,
        [(c.variant, c.category, c.before, c.after) for c in answer.changes],
    )


def _ratings(state: ServeState) -> dict[tuple[str, str | None], tuple[float, int, int, int]]:
    out = {}
    for category in (None, "math", "code"):
        for s in state.standings(category):
            out[s.name, category] = (round(s.rating, 9), s.wins, s.losses, s.ties)
    return out


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.e2e)])
def two_databases(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path | str, Path | str]:
    """Two fresh databases of one kind: SQLite files, or (end-to-end layer) databases on a PostgreSQL server,
    where a batch is read and written by other statements (:mod:`assay.serve.batch_store`)."""
    if request.param == "sqlite":
        return tmp_path / "together.db", tmp_path / "alone.db"
    base = request.getfixturevalue("pg_server")
    return create_database(base), create_database(base)


def test_a_batch_equals_the_same_feedback_applied_one_by_one(
    two_databases: tuple[Path | str, Path | str],
) -> None:
    together, alone = (_state(where) for where in two_databases)
    try:
        expected = SqliteStore if isinstance(two_databases[0], Path) else PostgresStore
        assert isinstance(together.db.write(store_for), expected)
        now = time.time()
        batched = together.db.write(lambda conn: apply_batch(conn, together.settings, BATCH, now))
        single = []
        for fb in BATCH:
            single += alone.db.write(lambda conn, fb=fb: apply_batch(conn, alone.settings, [fb], now))
        assert [_outcome(a) for a in batched] == [_outcome(a) for a in single]
        assert [_outcome(a)[0] for a in batched] == [
            "pairwise", "pairwise", "refused", "pairwise", "refused", "tie", "loser_only", "pairwise", "refused"
        ]  # fmt: skip
        assert batched[3].duplicate and batched[3].event_id == batched[1].event_id  # type: ignore[union-attr]
        assert _ratings(together) == _ratings(alone)
        assert [e["id"] for e in together.events()] == [
            a.event_id for a in batched if not isinstance(a, ApiError) and not a.duplicate
        ]
        assert sorted(together.variants()) == ["a", "b", "c", "new"]
    finally:
        together.close()
        alone.close()


def test_sqlite3_store_and_the_portable_store_apply_a_batch_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On SQLite a batch goes through sqlite3 itself; the portable SQLAlchemy store (the one for other databases)
    gives the same answers, ratings and log, and each runs its batches twice (a retried key answered as stored)."""
    import assay.serve.feedback as feedback_module

    outcomes = []
    for name, store in (("sqlite3.db", SqliteStore), ("portable.db", SqlStore)):
        monkeypatch.setattr(feedback_module, "store_for", store)
        state = _state(tmp_path / name)
        try:

            def work(conn: Any, state: ServeState = state) -> list[Any]:
                return apply_batch(conn, state.settings, BATCH, 1_700_000_000.0)

            runs = [state.db.write(work) for _ in range(2)]
            events = [(e["id"], e["winner"], e["loser"], e["result"]) for e in state.events()]
            outcomes.append(([[_outcome(a) for a in run] for run in runs], _ratings(state), events))
        finally:
            state.close()
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0][1][1] == ("pairwise", True, outcomes[0][0][0][1][2])  # k1 again: the stored answer


def test_concurrent_requests_are_grouped_and_each_gets_its_own_answer(tmp_path: Path) -> None:
    state = _state(tmp_path / "serve.db")
    answers: dict[int, Any] = {}

    def send(i: int) -> None:
        body = {"winner": "a", "loser": "b"} if i % 2 else {"winner": "c", "loser": "a", "category": "math"}
        try:
            answers[i] = state.record_feedback(_fb(**body, idempotency_key=f"t-{i}"))
        except ApiError as exc:
            answers[i] = exc

    # Another process's writer lock holds the first batch back, so the others queue behind it meanwhile.
    holder = sqlite3.connect(tmp_path / "serve.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    threads = [threading.Thread(target=send, args=(i,)) for i in range(64)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    holder.execute("COMMIT")
    holder.close()
    for thread in threads:
        thread.join()
    try:
        assert len(answers) == 64 and all(not isinstance(a, ApiError) for a in answers.values())
        assert len({a.event_id for a in answers.values()}) == 64
        assert state.writer.feedbacks == 64 and state.writer.batches <= 8
        ratings = {s.name: s for s in state.standings()}
        assert ratings["a"].wins + ratings["a"].losses == 64
        assert sum(s.rating for s in ratings.values()) == pytest.approx(4500.0, abs=1e-9)
    finally:
        state.close()


def test_the_writer_keeps_one_connection_and_takes_a_fresh_one_after_a_failure(tmp_path: Path) -> None:
    import sqlalchemy as sa

    state = _state(tmp_path / "serve.db")
    checkouts: list[int] = []
    sa.event.listen(state.db.engine, "checkout", lambda *_: checkouts.append(1))
    held = state.db.held()
    try:
        for _ in range(5):
            state.record_feedback(_fb(winner="a", loser="b"))
        assert len(checkouts) == 1  # the writer thread's batches share one connection

        def broken(conn: sa.Connection) -> None:
            raise ValueError("boom")

        assert state.db.write(lambda conn: conn.exec_driver_sql("SELECT 1").scalar(), held) == 1
        with pytest.raises(ValueError, match="boom"):
            state.db.write(broken, held)
        assert state.db.write(lambda conn: conn.exec_driver_sql("SELECT 2").scalar(), held) == 2
        assert len(checkouts) == 3  # a connection for ``held``, and a fresh one after the failure
    finally:
        held.close()
        state.close()
