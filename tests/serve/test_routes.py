"""The HTTP API over real HTTP (uvicorn on 127.0.0.1, httpx): ratings, selection, validation, auth."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.serve.conftest import AUTH

pytestmark = pytest.mark.e2e


def _register(client: httpx.Client, *names: str, **body: Any) -> None:
    for name in names:
        response = client.put(f"/api/v1/variants/{name}", json=body)
        assert response.status_code == 200, response.text


def _feedback(client: httpx.Client, **body: Any) -> dict[str, Any]:
    response = client.post("/api/v1/feedback", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def _ratings(client: httpx.Client, category: str | None = None) -> dict[str, dict[str, Any]]:
    params = {"category": category} if category else {}
    return {r["name"]: r for r in client.get("/api/v1/ratings", params=params).json()}


def test_ten_rounds_order_three_variants_and_count_every_comparison(client: httpx.Client) -> None:
    _register(client, "strong", "medium", "weak")
    assert {r["rating"] for r in _ratings(client).values()} == {1500.0}
    for _ in range(10):
        _feedback(client, winner="strong", loser="medium")
        _feedback(client, winner="medium", loser="weak")
        _feedback(client, winner="strong", loser="weak")
    board = client.get("/api/v1/leaderboard").json()
    assert [r["name"] for r in board] == ["strong", "medium", "weak"]
    assert [r["rank"] for r in board] == [1, 2, 3]
    strong, medium, weak = board
    assert (strong["wins"], strong["losses"], strong["comparisons"]) == (20, 0, 20)
    assert (weak["wins"], weak["losses"], weak["comparisons"]) == (0, 20, 20)
    assert (medium["wins"], medium["losses"]) == (10, 10)
    assert math.isclose(sum(r["rating"] for r in board), 4500.0, abs_tol=1e-6)
    assert strong["confidence"] == pytest.approx(1 / (1 + math.exp(-0.2 * (20 - 5))))
    assert strong["win_rate"] == 1.0 and weak["win_rate"] == 0.0
    chosen = client.post("/api/v1/select", json={"candidates": ["weak", "medium", "strong"]}).json()
    assert chosen["variant"] == "strong"
    ratings = [strong["rating"], medium["rating"], weak["rating"]]
    expected = 10 ** (ratings[0] / 400) / sum(10 ** (r / 400) for r in ratings)
    assert chosen["probability"] == pytest.approx(expected)
    assert chosen["reasoning"] == f"Selected based on Elo rating {strong['rating']:.1f} (win rate: 20/20)"
    assert chosen["detail"].startswith("strong chosen among 3 candidate(s)") and "\n" not in chosen["detail"]


def test_first_feedback_follows_elo_and_a_tie_keeps_the_sum(client: httpx.Client) -> None:
    _register(client, "a", "b")
    first = _feedback(client, winner="a", loser="b")
    assert [(c["variant"], c["after"]) for c in first["changes"]] == [("a", 1516.0), ("b", 1484.0)]
    tie = _feedback(client, winner="a", loser="b", tie=True)
    assert tie["kind"] == "tie"
    ratings = _ratings(client)
    assert ratings["a"]["rating"] < 1516.0 and ratings["b"]["rating"] > 1484.0
    assert ratings["a"]["rating"] + ratings["b"]["rating"] == pytest.approx(3000.0, abs=1e-9)
    assert (ratings["a"]["ties"], ratings["b"]["ties"], ratings["a"]["comparisons"]) == (1, 1, 2)


def test_one_sided_feedback_moves_by_a_tenth_of_k_scaled_by_confidence(client: httpx.Client) -> None:
    _register(client, "a", "b")
    assert _feedback(client, winner="a")["kind"] == "winner_only"
    assert _feedback(client, loser="b", confidence=0.5)["kind"] == "loser_only"
    ratings = _ratings(client)
    assert ratings["a"]["rating"] == pytest.approx(1500 + 3.2)
    assert ratings["b"]["rating"] == pytest.approx(1500 - 1.6)
    assert ratings["a"]["comparisons"] == ratings["b"]["comparisons"] == 0
    half = _feedback(client, winner="a", loser="b", confidence=0.25)["changes"][0]
    assert half["after"] - half["before"] == pytest.approx(0.25 * 32 / (1 + 10 ** ((1503.2 - 1498.4) / 400)))


def _snapshot(client: httpx.Client) -> tuple[Any, ...]:
    metrics = client.get("/metrics").text
    feedback = sorted(line for line in metrics.splitlines() if line.startswith("assay_serve_feedback_total"))
    return (client.get("/api/v1/ratings").json(), client.get("/api/v1/variants").json(), feedback)


INVALID: list[tuple[str, str, Any, int, str]] = [
    ("post", "/api/v1/feedback", {}, 422, "missing_models"),
    ("post", "/api/v1/feedback", {"winner": "  ", "loser": ""}, 422, "missing_models"),
    ("post", "/api/v1/feedback", {"winner": "a", "loser": " a "}, 422, "self_comparison"),
    ("post", "/api/v1/feedback", {"winner": "a", "tie": True}, 422, "invalid_tie"),
    ("post", "/api/v1/feedback", {"winner": "a", "loser": "b", "confidence": 1.5}, 422, "invalid_confidence"),
    (
        "post",
        "/api/v1/feedback",
        {"winner": "a", "loser": "b", "confidence": -0.1},
        422,
        "invalid_confidence",
    ),
    (
        "post",
        "/api/v1/feedback",
        {"winner": "a", "loser": "b", "confidence": math.nan},
        422,
        "invalid_confidence",
    ),
    (
        "post",
        "/api/v1/feedback",
        {"winner": "a", "loser": "b", "confidence": math.inf},
        422,
        "invalid_confidence",
    ),
    ("post", "/api/v1/feedback", {"winner": "a", "loser": "b", "confidence": "high"}, 422, "invalid_request"),
    ("post", "/api/v1/feedback", {"winner": "a", "loser": "ghost"}, 404, "unknown_variant"),
    (
        "post",
        "/api/v1/feedback",
        {"winner": "a", "loser": "b", "category": "bad category!"},
        422,
        "invalid_name",
    ),
    (
        "post",
        "/api/v1/feedback",
        {"winner": "a", "loser": "b", "category": "poetry"},
        409,
        "category_conflict",
    ),
    ("post", "/api/v1/feedback", {"winner": "a", "loser": "b", "colour": "red"}, 422, "invalid_request"),
    ("post", "/api/v1/select", {"candidates": ["a", "ghost"]}, 404, "unknown_variant"),
    ("post", "/api/v1/select", {"candidates": []}, 422, "no_candidates"),
    ("post", "/api/v1/select", {"category": "poetry", "candidates": ["a"]}, 409, "category_conflict"),
    ("post", "/api/v1/select", {"cost_weight": -1}, 422, "invalid_cost"),
    ("put", "/api/v1/variants/c", {"cost_per_1m_tokens": -2}, 422, "invalid_cost"),
    ("put", "/api/v1/variants/c", {"category_scores": {"math": 1.2}}, 422, "invalid_score"),
    (
        "put",
        "/api/v1/variants/c",
        {"categories": ["code"], "category_scores": {"math": 0.5}},
        409,
        "category_conflict",
    ),
    ("put", "/api/v1/variants/%20", {}, 422, "invalid_name"),
    ("post", "/api/v1/recompute", {"backend": "chess"}, 422, "unknown_backend"),
]


@pytest.mark.parametrize(("method", "path", "body", "status", "code"), INVALID)
def test_each_invalid_request_gets_its_code_and_changes_nothing(
    client: httpx.Client, method: str, path: str, body: Any, status: int, code: str
) -> None:
    _register(client, "a", "b", categories=["math", "code"])
    _feedback(client, winner="a", loser="b", category="math")
    before = _snapshot(client)
    # json.dumps writes NaN and Infinity as bare words, as a careless client would; httpx refuses to.
    content = json.dumps(body)
    response = client.request(method, path, content=content, headers={"content-type": "application/json"})
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert error["message"] and "\n" not in error["message"]
    assert _snapshot(client) == before


def test_writes_need_the_token_and_reads_are_open_by_default(client: httpx.Client) -> None:
    bare = httpx.Client(base_url=str(client.base_url))
    wrong = httpx.Client(base_url=str(client.base_url), headers={"Authorization": "Bearer nope"})
    with bare, wrong:
        for c in (bare, wrong):
            response = c.put("/api/v1/variants/a", json={})
            assert response.status_code == 401 and response.json()["error"]["code"] == "unauthorized"
            assert c.post("/api/v1/feedback", json={"winner": "a"}).status_code == 401
        assert bare.get("/api/v1/variants").json() == []
        assert bare.get("/api/v1/leaderboard").status_code == 200
        assert bare.get("/metrics").status_code == 200
    _register(client, "a")
    assert [v["name"] for v in client.get("/api/v1/variants").json()] == ["a"]


def test_reads_can_require_the_token(make_server: Callable[..., httpx.Client]) -> None:
    client = make_server(require_token_for_reads=True)
    with httpx.Client(base_url=str(client.base_url)) as bare:
        assert bare.get("/api/v1/ratings").status_code == 401
        assert bare.post("/api/v1/select", json={}).status_code == 401
        assert bare.get("/metrics").status_code == 401
        assert bare.get("/healthz").status_code == 200
    assert client.get("/api/v1/ratings", headers=AUTH).status_code == 200


def test_idempotency_key_counts_a_retry_once_and_refuses_reuse(client: httpx.Client) -> None:
    _register(client, "a", "b")
    first = _feedback(client, winner="a", loser="b", idempotency_key="req-1")
    again = client.post(
        "/api/v1/feedback", json={"winner": "a", "loser": "b"}, headers={"Idempotency-Key": "req-1"}
    )
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert again.json()["event_id"] == first["event_id"] and again.json()["changes"] == first["changes"]
    assert _ratings(client)["a"]["wins"] == 1
    other = client.post("/api/v1/feedback", json={"winner": "b", "loser": "a", "idempotency_key": "req-1"})
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_conflict"
    assert _ratings(client)["b"]["wins"] == 0


def test_unknown_variants_can_be_registered_on_first_feedback(
    make_server: Callable[..., httpx.Client],
) -> None:
    client = make_server(unknown_variants="register")
    _feedback(client, winner="new-a", loser="new-b")
    assert sorted(_ratings(client)) == ["new-a", "new-b"]
    chosen = client.post("/api/v1/select", json={"candidates": ["new-a", "never-seen"]}).json()
    assert chosen["variant"] == "new-a"
    assert {c["name"]: c["source"] for c in chosen["candidates"]}["never-seen"] == "start"
