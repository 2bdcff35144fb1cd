"""A client written for the semantic router's feedback API, unchanged, against ``assay serve``: its field names,
its extra fields, its multi-round example, its reasoning line and its ``elo_ratings.json``."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from assay.errors import AssayError
from assay.serve.router_ratings import load_router_ratings
from assay.serve.settings import ServeSettings
from assay.serve.state import ServeState
from tests.extras import need
from tests.serve.conftest import AUTH, run_serve, start_serve

need("serve")

# The router's documented example, byte for byte the body of its curl command.
CURL_BODY = {
    "query": "Solve: 2x + 5 = 15",
    "winner_model": "gpt-4",
    "loser_model": "llama-3.2-3b",
    "decision_name": "math_reasoning",
}


def _post(client: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/api/v1/feedback", json=body)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.e2e
def test_the_routers_curl_example_registers_its_models_and_answers_as_the_router(
    client: httpx.Client,
) -> None:
    answer = _post(client, CURL_BODY)
    assert answer["success"] is True and answer["message"] == "Feedback recorded successfully"
    assert answer["timestamp"].endswith("Z") and answer["kind"] == "pairwise"
    # The router's clients never register models: the first feedback naming them does (reject is the default).
    assert sorted(v["name"] for v in client.get("/api/v1/variants").json()) == ["gpt-4", "llama-3.2-3b"]
    math_board = client.get("/api/v1/leaderboard", params={"category": "math_reasoning"}).json()
    assert [(r["name"], r["rating"], r["source"]) for r in math_board] == [
        ("gpt-4", 1516.0, "category"),
        ("llama-3.2-3b", 1484.0, "category"),
    ]
    # Our own field names still refuse a variant nobody registered.
    refused = client.post("/api/v1/feedback", json={"winner": "gpt-4", "loser": "mistral"})
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "unknown_variant"


@pytest.mark.e2e
def test_the_routers_multi_round_scenario_with_its_field_names(client: httpx.Client) -> None:
    for _ in range(10):
        for winner, loser in (("strong", "medium"), ("medium", "weak"), ("strong", "weak")):
            _post(client, {"query": "q", "winner_model": winner, "loser_model": loser})
    board = client.get("/api/v1/leaderboard").json()
    assert [r["name"] for r in board] == ["strong", "medium", "weak"]
    strong, medium, weak = board
    assert (strong["wins"], strong["losses"]) == (20, 0)
    assert (weak["wins"], weak["losses"]) == (0, 20)
    assert (medium["wins"], medium["losses"]) == (10, 10)
    assert sum(r["rating"] for r in board) == pytest.approx(4500.0, abs=1e-9)
    chosen = client.post("/api/v1/select", json={}).json()
    assert chosen["variant"] == "strong"
    assert chosen["reasoning"] == f"Selected based on Elo rating {strong['rating']:.1f} (win rate: 20/20)"
    _post(client, {"winner_model": "weak", "loser_model": "strong", "decision_name": "poetry"})
    in_poetry = client.post("/api/v1/select", json={"category": "poetry"}).json()
    assert in_poetry["reasoning"].startswith("Category 'poetry': Selected based on Elo rating ")
    # A new category row starts from the global rating, so strong still leads after one loss there.
    assert in_poetry["reasoning"].endswith("(win rate: 0/1)") and in_poetry["variant"] == "strong"


@pytest.mark.e2e
def test_the_routers_extra_fields_are_stored_and_feedback_types_counted(
    client: httpx.Client, tmp_path: Path
) -> None:
    body = {
        **CURL_BODY,
        "tie": False,
        "user_id": " user-7 ",
        "confidence": 0.5,
        "response": "x = 5",
        "session_id": "s-1",
        "conversation_id": "c-9",
        "feedback_type": "wrong_answer",
        "timestamp": "2025-01-02T03:04:05Z",
    }
    first = _post(client, body)
    assert first["confidence"] == 0.5 and first["changes"][0]["after"] == pytest.approx(1508.0)
    _post(client, {**CURL_BODY, "feedback_type": "satisfied", "timestamp": 1_700_000_000})
    _post(client, {**CURL_BODY, "feedback_type": "sarcastic"})
    state = ServeState(ServeSettings(db_url=f"sqlite:///{tmp_path / 'serve.db'}"))
    try:
        event = state.events()[0]
    finally:
        state.close()
    assert (event["winner"], event["loser"], event["category"]) == ("gpt-4", "llama-3.2-3b", "math_reasoning")
    assert (event["user_id"], event["session_id"], event["conversation_id"]) == ("user-7", "s-1", "c-9")
    assert (event["response"], event["feedback_type"], event["query"]) == (
        "x = 5",
        "wrong_answer",
        CURL_BODY["query"],
    )
    assert event["client_time"] == 1735787045.0
    metrics = client.get("/metrics").text
    for kind, count in (("wrong_answer", 1), ("satisfied", 1), ("want_different", 0), ("other", 1)):
        assert f'assay_serve_feedback_type_total{{feedback_type="{kind}"}} {count}.0' in metrics


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"winner": "a", "winner_model": "b"}, "winner_model"),
        ({"winner_model": "a", "loser": "b", "loser_model": "c"}, "loser_model"),
        ({"winner_model": "a", "category": "x", "decision_name": "y"}, "decision_name"),
        ({"winner_model": "a", "timestamp": "yesterday"}, "timestamp"),
        ({"winner_model": "a", "timestamp": -5}, "timestamp"),
    ],
)
@pytest.mark.e2e
def test_two_spellings_that_disagree_or_a_bad_time_are_refused(
    client: httpx.Client, body: dict[str, Any], field: str
) -> None:
    response = client.post("/api/v1/feedback", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == field
    assert client.get("/api/v1/variants").json() == []


@pytest.mark.e2e
def test_the_same_name_in_both_spellings_is_one_feedback(client: httpx.Client) -> None:
    answer = _post(client, {"winner": "a", "winner_model": "a", "loser_model": "b", "decision_name": "math"})
    assert answer["category"] == "math" and len(answer["changes"]) == 4


def _router_file(path: Path) -> Path:
    record = {"model": "gpt-4", "rating": 1568.0, "comparisons": 30, "wins": 20, "losses": 8, "ties": 2}
    data = {
        "version": 1,
        "last_updated": "2025-01-01T00:00:00Z",
        "global_ratings": {
            "gpt-4": record,
            "llama": {"model": "llama", "rating": 50.0, "comparisons": 3, "wins": -4, "losses": 3, "ties": 0},
            "ghost": None,
        },
        "category_ratings": {
            "math": {"gpt-4": {**record, "rating": 5000.0}},
            "code": {"llama": {"rating": 1740.0, "comparisons": 12, "wins": 9, "losses": 3, "ties": 0}},
        },
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_routers_ratings_file_is_read_with_its_clamps(tmp_path: Path) -> None:
    ratings = {(r.model, r.category): r for r in load_router_ratings(_router_file(tmp_path / "elo.json"))}
    assert set(ratings) == {("gpt-4", None), ("gpt-4", "math"), ("llama", None), ("llama", "code")}
    assert ratings["gpt-4", None].rating == 1568.0 and ratings["gpt-4", None].wins == 20
    assert ratings["gpt-4", "math"].rating == 3000.0
    assert ratings["llama", None].rating == 100.0 and ratings["llama", None].wins == 0
    assert ratings["llama", "code"].rating == 1740.0


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{not json", "not a JSON ratings file"),
        (
            '{"global_ratings": {"a": {"rating": "high"}}}',
            "global_ratings.a.rating: expected a finite number",
        ),
        ('{"global_ratings": {"a": {"rating": 1500, "wins": 1.5}}}', "global_ratings.a.wins"),
        ('{"category_ratings": {"bad name!": {}}}', "category_ratings.bad name!"),
        ('{"global_ratings": []}', "global_ratings: expected an object"),
    ],
)
def test_a_malformed_ratings_file_is_one_line_naming_the_field(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "elo.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AssayError) as caught:
        load_router_ratings(path)
    assert words in str(caught.value) and str(path) in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.e2e
def test_serve_imports_the_routers_ratings_and_keeps_what_feedback_moved(tmp_path: Path) -> None:
    ratings_file = _router_file(tmp_path / "elo_ratings.json")
    db = f"sqlite:///{tmp_path / 'serve.db'}"
    first = start_serve(["--db", db, "--import-ratings", str(ratings_file)], tmp_path)
    try:
        assert any("imported 4 rating(s)" in line for line in first.lines)
        with httpx.Client(base_url=first.url, headers=AUTH, timeout=30) as client:
            board = {r["name"]: r for r in client.get("/api/v1/ratings").json()}
            assert (board["gpt-4"]["rating"], board["gpt-4"]["wins"], board["gpt-4"]["ties"]) == (
                1568.0,
                20,
                2,
            )
            assert board["llama"]["rating"] == 100.0
            code = {r["name"]: r for r in client.get("/api/v1/ratings", params={"category": "code"}).json()}
            assert code["llama"]["rating"] == 1740.0 and code["gpt-4"]["source"] == "global"
            moved = _post(client, {"winner_model": "llama", "loser_model": "gpt-4", "decision_name": "code"})
            after = moved["changes"][-2]["after"]
    finally:
        first.stop()
    second = start_serve(["--db", db, "--import-ratings", str(ratings_file)], tmp_path)
    try:
        # The feedback moved both global rows and llama's code row; only gpt-4's math row is set again.
        assert "imported 1 rating(s)" in second.lines[0] and "3 kept" in second.lines[0], second.lines
        with httpx.Client(base_url=second.url, timeout=30) as client:
            code = {r["name"]: r for r in client.get("/api/v1/ratings", params={"category": "code"}).json()}
            assert code["llama"]["rating"] == after and code["llama"]["wins"] == 10
    finally:
        second.stop()
    broken = tmp_path / "broken.json"
    broken.write_text('{"global_ratings": {"a": {"rating": NaN}}}', encoding="utf-8")
    done = run_serve(["--db", db, "--import-ratings", str(broken)], tmp_path)
    assert done.returncode == 2 and "global_ratings.a.rating" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.mark.e2e
def test_an_older_database_gets_the_new_event_columns(
    tmp_path: Path, make_server: Callable[..., httpx.Client]
) -> None:
    path = tmp_path / "serve.db"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE serve_feedback_events (id INTEGER PRIMARY KEY, idempotency_key VARCHAR(200) UNIQUE, "
            "fingerprint VARCHAR(64) NOT NULL, time FLOAT NOT NULL, kind VARCHAR(16) NOT NULL, winner VARCHAR(200), "
            "loser VARCHAR(200), category VARCHAR(100), confidence FLOAT NOT NULL, query TEXT, "
            "user_id VARCHAR(200), session_id VARCHAR(200), result JSON NOT NULL)"
        )
    client = make_server()
    _post(client, {**CURL_BODY, "feedback_type": "satisfied", "conversation_id": "c"})
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT feedback_type, conversation_id FROM serve_feedback_events").fetchone()
    assert row == ("satisfied", "c")
    assert math.isclose(client.get("/api/v1/ratings").json()[0]["rating"], 1516.0)
