"""The SQL state on its own: several processes on one SQLite file, seeds and fallbacks, decay, bad files."""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from assay.errors import AssayError
from assay.serve.database import ServeStorageError
from assay.serve.schemas import FeedbackIn, VariantIn
from assay.serve.settings import ServeSettings
from assay.serve.state import ServeState
from assay.serve.tables import RATINGS
from assay.serve.validation import check_feedback

ROUNDS = 40


def _worker(url: str, offset: int) -> None:
    state = ServeState(ServeSettings(db_url=url))
    try:
        for i in range(ROUNDS):
            pair = [("a", "b"), ("b", "c"), ("a", "c")][(i + offset) % 3]
            tie = i % 5 == 0
            state.record_feedback(check_feedback(FeedbackIn(winner=pair[0], loser=pair[1], tie=tie)))
    finally:
        state.close()


def test_processes_writing_one_sqlite_file_lose_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'serve.db'}"
    state = ServeState(ServeSettings(db_url=url))
    for name in "abc":
        state.register_variant(name, VariantIn())
    # spawn: forking a process that has threads (the SQLAlchemy pool) may deadlock, and 3.12 warns about it.
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_worker, args=(url, n)) for n in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    board = {s.name: s for s in state.standings()}
    assert sum(s.comparisons for s in board.values()) == 2 * 3 * ROUNDS
    assert sum(s.wins for s in board.values()) == sum(s.losses for s in board.values())
    assert sum(s.rating for s in board.values()) == pytest.approx(4500.0, abs=1e-6)
    assert len(state.events()) == 3 * ROUNDS
    state.close()


def test_seeds_fill_categories_but_never_overwrite_learned_ratings(tmp_path: Path) -> None:
    state = ServeState(ServeSettings(db_url=f"sqlite:///{tmp_path / 's.db'}"))
    out = state.register_variant("a", VariantIn(category_scores={"math": 0.8, "code": 0.25}))
    assert out.seeded == {"code": 1250.0, "math": 1800.0} and out.created
    state.register_variant("b", VariantIn())
    math_board = {s.name: s for s in state.standings("math")}
    assert (math_board["a"].rating, math_board["a"].source) == (1800.0, "seed")
    assert (math_board["b"].rating, math_board["b"].source) == (1500.0, "global")
    state.record_feedback(check_feedback(FeedbackIn(winner="b", loser="a", category="math")))
    again = state.register_variant("a", VariantIn(category_scores={"math": 0.1, "code": 0.5}))
    assert again.kept == ["math"] and again.seeded == {"code": 1500.0} and not again.created
    math_board = {s.name: s for s in state.standings("math")}
    assert math_board["a"].source == "category" and math_board["a"].rating < 1800.0
    assert math_board["b"].source == "category" and math_board["b"].rating > 1500.0
    assert {s.name: s.source for s in state.standings("poetry")} == {"a": "global", "b": "global"}
    assert [s.source for s in state.standings(None, ["zz"])] == ["start"]
    state.close()


def test_time_decay_pulls_ratings_back_to_their_prior(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'd.db'}"
    state = ServeState(ServeSettings(db_url=url, decay_half_life=3600.0))
    state.register_variant("a", VariantIn())
    state.register_variant("b", VariantIn())
    state.record_feedback(check_feedback(FeedbackIn(winner="a", loser="b")))
    assert [s.rating for s in state.standings()] == pytest.approx([1516.0, 1484.0], abs=0.01)
    with state.db.engine.begin() as conn:
        conn.execute(RATINGS.update().values(updated=time.time() - 3600.0))
    decayed = {s.name: s.rating for s in state.standings()}
    assert decayed["a"] == pytest.approx(1508.0, abs=0.01) and decayed["b"] == pytest.approx(1492.0, abs=0.01)
    change = state.record_feedback(check_feedback(FeedbackIn(winner="a", loser="b"))).changes[0]
    assert change.before == pytest.approx(1508.0, abs=0.01)
    state.close()


def test_corrupt_file_and_bad_settings_are_one_line_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.db"
    path.write_bytes(b"garbage, not sqlite \x00\x01" * 400)
    with pytest.raises(ServeStorageError) as err:
        ServeState(ServeSettings(db_url=f"sqlite:///{path}"))
    message = str(err.value)
    assert str(path) in message and "corrupt" in message and "\n" not in message
    with pytest.raises(AssayError, match="reads need a token"):
        ServeSettings(require_token_for_reads=True)
    with pytest.raises(AssayError, match="k has an invalid value"):
        ServeSettings(k=float("nan"))


@pytest.mark.e2e
def test_a_locked_database_answers_503_and_changes_nothing(
    tmp_path: Path, make_server: Callable[..., httpx.Client]
) -> None:
    path = tmp_path / "serve.db"
    client = make_server(db_url=f"sqlite:///{path}", busy_timeout=0.2)
    for name in "ab":
        assert client.put(f"/api/v1/variants/{name}", json={}).status_code == 200
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        response = client.post("/api/v1/feedback", json={"winner": "a", "loser": "b"})
        assert response.status_code == 503
        error = response.json()["error"]
        assert (
            error["code"] == "storage_error" and "locked" in error["message"] and "\n" not in error["message"]
        )
        holder.execute("ROLLBACK")
    finally:
        holder.close()
    assert {r["wins"] for r in client.get("/api/v1/ratings").json()} == {0}
    assert client.post("/api/v1/feedback", json={"winner": "a", "loser": "b"}).status_code == 200
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM serve_feedback_events").scalar() == 1
    engine.dispose()


def test_group_reads_share_the_reader_threads_connection_and_see_new_feedback(tmp_path: Path) -> None:
    import asyncio

    state = ServeState(ServeSettings(db_url=f"sqlite:///{tmp_path / 'serve.db'}"))
    state.register_variant("a", VariantIn())
    state.register_variant("b", VariantIn())
    checkouts: list[int] = []
    sa.event.listen(state.db.engine, "checkout", lambda *_: checkouts.append(1))

    async def wins_of_a() -> list[int]:
        seen = []
        for _ in range(3):
            _, rows = await state.snapshot_async(None)
            seen.append(next(r["wins"] for r in rows if r["variant"] == "a"))
            state.record_feedback(check_feedback(FeedbackIn(winner="a", loser="b")))
        return seen

    try:
        assert asyncio.run(wins_of_a()) == [0, 1, 2]  # each read is a new snapshot
        assert len(checkouts) == 2  # one for the reader thread's reads, one for the writer's batches
    finally:
        state.close()
