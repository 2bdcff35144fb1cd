"""The ratings given back to the semantic router: its own ``elo_ratings.json`` (``data/router_elo_ratings.json``,
written as the router's Go code writes it) imported and exported again is the same file, in process, over HTTP
and from the CLI; the write is atomic and keeps an unreadable file as ``.corrupted``."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from assay.errors import AssayError
from assay.serve.router_export import export_router_file, router_file
from assay.serve.router_ratings import RouterRating, dump_router_ratings, go_time, load_router_ratings
from assay.serve.schemas import FeedbackIn
from assay.serve.settings import ServeSettings
from assay.serve.state import ServeState
from assay.serve.tables import RATINGS
from assay.serve.validation import check_feedback
from tests.extras import need
from tests.serve.conftest import asgi_client, run_serve, start_serve

need("serve")

ROUTER_FILE = Path(__file__).parent / "data" / "router_elo_ratings.json"
ROUTER_TEXT = ROUTER_FILE.read_text(encoding="utf-8")
ROUTER_TIME = datetime(2025, 6, 1, 12, 30, 45, 123456, tzinfo=UTC)
_LAST_UPDATED = re.compile(r'"last_updated": "([^"]*)"')


def _imported(tmp_path: Path, name: str = "serve.db", **settings: object) -> ServeState:
    state = ServeState(ServeSettings(db_url=f"sqlite:///{tmp_path / name}", **settings))  # type: ignore[arg-type]
    assert state.import_ratings(load_router_ratings(ROUTER_FILE)) == (7, 0)
    return state


def _same_but_the_time(text: str) -> None:
    """``text`` is the router's file but for its ``last_updated``, which is the time of the export."""
    found = _LAST_UPDATED.search(text)
    assert found is not None
    written = datetime.fromisoformat(found.group(1))
    assert abs(datetime.now(UTC) - written) < timedelta(minutes=5)
    assert _LAST_UPDATED.sub(f'"last_updated": "{go_time(ROUTER_TIME)}"', text) == ROUTER_TEXT


def test_the_routers_file_imported_and_exported_is_the_same_bytes(tmp_path: Path) -> None:
    state = _imported(tmp_path)
    try:
        assert router_file(state, ROUTER_TIME) == ROUTER_TEXT
        _same_but_the_time(router_file(state))
    finally:
        state.close()


def test_go_writes_times_and_numbers_as_the_export_does() -> None:
    assert go_time(ROUTER_TIME) == "2025-06-01T12:30:45.123456Z"
    assert go_time(datetime(2025, 1, 2, 3, 4, 5, 120000, tzinfo=UTC)) == "2025-01-02T03:04:05.12Z"
    eastern = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC).astimezone(
        __import__("zoneinfo").ZoneInfo("Asia/Tokyo")
    )
    assert go_time(eastern) == "2025-01-02T03:04:05Z"
    odd = RouterRating("a<b&c", "math", 1500.0, 1, 1, 0, 0)
    text = dump_router_ratings([odd], ROUTER_TIME)
    assert '"a\\u003cb\\u0026c": {' in text and '"rating": 1500,' in text and not text.endswith("\n")
    assert json.loads(text)["category_ratings"]["math"]["a<b&c"]["model"] == "a<b&c"
    assert json.loads(dump_router_ratings([], ROUTER_TIME)) == {
        "version": 1,
        "last_updated": "2025-06-01T12:30:45.123456Z",
        "global_ratings": {},
        "category_ratings": {},
    }


def test_ratings_learned_here_go_back_and_come_again_unchanged(tmp_path: Path) -> None:
    state = ServeState(ServeSettings(db_url=f"sqlite:///{tmp_path / 'a.db'}", unknown_variants="register"))
    try:
        for winner, loser, category in (("a", "b", "math"), ("b", "c", None), ("c", "a", "code")):
            state.record_feedback(check_feedback(FeedbackIn(winner=winner, loser=loser, category=category)))
        state.record_feedback(check_feedback(FeedbackIn(winner="a", loser="c", tie=True)))
        first = router_file(state, ROUTER_TIME)
    finally:
        state.close()
    data = json.loads(first)
    assert sorted(data["global_ratings"]) == ["a", "b", "c"] and sorted(data["category_ratings"]) == [
        "code",
        "math",
    ]
    assert data["global_ratings"]["a"]["rating"] != 1500 and data["global_ratings"]["a"]["ties"] == 1
    path = tmp_path / "elo_ratings.json"
    path.write_text(first, encoding="utf-8")
    again = ServeState(ServeSettings(db_url=f"sqlite:///{tmp_path / 'b.db'}"))
    try:
        again.import_ratings(load_router_ratings(path))
        assert router_file(again, ROUTER_TIME) == first
    finally:
        again.close()


def test_the_export_writes_atomically_and_keeps_an_unreadable_file(tmp_path: Path) -> None:
    state = _imported(tmp_path)
    out = tmp_path / "vsr" / "elo_ratings.json"
    try:
        first = export_router_file(state, out, ROUTER_TIME)  # the folder is made, as the router makes it
        assert out.read_text(encoding="utf-8") == ROUTER_TEXT
        assert (first.global_ratings, first.category_ratings, first.categories, first.backup) == (
            3,
            4,
            2,
            None,
        )
        out.write_bytes(b'{"global_ratings": {"gpt-4": {"rating": "high"')
        second = export_router_file(state, out, ROUTER_TIME)
        backup = out.with_name("elo_ratings.json.corrupted")
        assert (
            second.backup == backup
            and backup.read_bytes() == b'{"global_ratings": {"gpt-4": {"rating": "high"'
        )
        assert second.why is not None and second.why.startswith("not a JSON ratings file")
        assert out.read_text(encoding="utf-8") == ROUTER_TEXT
        # A valid file and an empty one are replaced without a copy (the router reads an empty one as none).
        backup.unlink()
        for before in (ROUTER_TEXT.replace("1568", "1600"), ""):
            out.write_text(before, encoding="utf-8")
            assert export_router_file(state, out, ROUTER_TIME).backup is None and not backup.exists()
            assert out.read_text(encoding="utf-8") == ROUTER_TEXT
        assert sorted(p.name for p in out.parent.iterdir()) == ["elo_ratings.json"]  # no temporary file left
        taken = tmp_path / "taken"
        taken.mkdir()
        with pytest.raises(AssayError) as caught:
            export_router_file(state, taken)
        assert str(taken) in str(caught.value) and "\n" not in str(caught.value)
        assert list(taken.iterdir()) == []
    finally:
        state.close()


def test_the_export_gives_the_ratings_as_reads_give_them(tmp_path: Path) -> None:
    state = _imported(tmp_path, decay_half_life=3600.0)
    try:
        state.record_feedback(check_feedback(FeedbackIn(winner="gpt-4", loser="mistral-7b")))
        with state.db.engine.begin() as conn:
            conn.execute(RATINGS.update().values(updated=time.time() - 3600.0))
        data = json.loads(router_file(state))
        shown = {s.name: s.rating for s in state.standings()}
        with state.db.engine.begin() as conn:
            stored = conn.execute(RATINGS.select().where(RATINGS.c.variant == "gpt-4")).mappings().all()
        raw = next(row["rating"] for row in stored if row["category"] == "")
        exported = data["global_ratings"]["gpt-4"]
        assert exported["rating"] == pytest.approx(shown["gpt-4"], abs=0.01)
        assert raw - exported["rating"] > 1.0 and exported["wins"] == 21
    finally:
        state.close()


def test_serves_own_elo_k_stays_the_routers_32(tmp_path: Path) -> None:
    assert ServeSettings().k == 32.0
    state = ServeState(ServeSettings(db_url=f"sqlite:///{tmp_path / 'k.db'}", unknown_variants="register"))
    try:
        change = state.record_feedback(check_feedback(FeedbackIn(winner="a", loser="b"))).changes[0]
        assert (change.before, change.after) == (1500.0, 1516.0)
    finally:
        state.close()


async def test_format_router_answers_the_file_and_refuses_what_it_cannot_mean(tmp_path: Path) -> None:
    _imported(tmp_path).close()
    async with asgi_client(ServeSettings(db_url=f"sqlite:///{tmp_path / 'serve.db'}")) as client:
        answer = await client.get("/api/v1/ratings", params={"format": "router"})
        assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
        _same_but_the_time(answer.text)
        for params, field in (
            ({"format": "csv"}, "format"),
            ({"format": "router", "category": "x"}, "category"),
        ):
            refused = await client.get("/api/v1/ratings", params=params)
            assert refused.status_code == 422 and refused.json()["error"]["field"] == field
        plain = await client.get("/api/v1/ratings")
        assert [r["name"] for r in plain.json()] == ["gpt-4", "llama-3.2-3b", "mistral-7b"]


@pytest.mark.e2e
def test_the_routers_file_round_trips_through_serve_over_http_and_the_cli(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'serve.db'}"
    server = start_serve(["--db", db, "--import-ratings", str(ROUTER_FILE)], tmp_path)
    try:
        assert "imported 7 rating(s)" in server.lines[0], server.lines
        with httpx.Client(base_url=server.url, timeout=30) as client:
            answer = client.get("/api/v1/ratings", params={"format": "router"})
        assert answer.status_code == 200, answer.text
        _same_but_the_time(answer.text)
    finally:
        server.stop()
    out = tmp_path / "elo_ratings.json"
    out.write_text("{half a file", encoding="utf-8")
    done = run_serve(["export-ratings", "--db", db, "--out", str(out)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"kept the file that was at {out} as {out}.corrupted (not a JSON ratings file "
        "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1)))",
        f"wrote 3 global and 4 category rating(s) (2 categories) to {out}",
    ]
    _same_but_the_time(out.read_text(encoding="utf-8"))
    assert (tmp_path / "elo_ratings.json.corrupted").read_text(encoding="utf-8") == "{half a file"
    missing = run_serve(
        ["export-ratings", "--db", f"sqlite:///{tmp_path / 'none.db'}", "--out", str(out)], tmp_path
    )
    assert missing.returncode == 2 and "none.db: no such file" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1 and not (tmp_path / "none.db").exists()
