"""The edges a fuzzing pass found, closed: over-long idempotency headers, bodies json cannot read, names that
are not text, a health check that says where the database lives; every refusal in the documented shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from assay.serve.settings import ServeSettings
from assay.serve.state import ServeState
from tests.extras import need
from tests.serve.conftest import TOKEN, thread_server

pytestmark = pytest.mark.e2e

need("serve")

JSON = {"content-type": "application/json"}


def _register(client: httpx.Client, *names: str) -> None:
    for name in names:
        assert client.put(f"/api/v1/variants/{name}", json={}).status_code == 200


def _state(client: httpx.Client) -> tuple[Any, ...]:
    return (client.get("/api/v1/ratings").json(), client.get("/api/v1/variants").json())


def _refused(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert list(body) == ["error"], body
    assert body["error"]["code"] == code and body["error"]["message"]
    assert "\n" not in body["error"]["message"]
    return body["error"]


@pytest.mark.parametrize("length", [201, 300, 60_000])
def test_an_idempotency_header_longer_than_the_column_is_refused(client: httpx.Client, length: int) -> None:
    _register(client, "a", "b")
    before = _state(client)
    response = client.post(
        "/api/v1/feedback", json={"winner": "a", "loser": "b"}, headers={"Idempotency-Key": "k" * length}
    )
    assert _refused(response, 422, "invalid_request")["field"] == "Idempotency-Key"
    assert _state(client) == before
    fits = client.post(
        "/api/v1/feedback", json={"winner": "a", "loser": "b"}, headers={"Idempotency-Key": "k" * 200}
    )
    assert fits.status_code == 200


BAD_BODIES: list[tuple[str, bytes]] = [
    ("invalid UTF-8", b'{"winner": "\xff\xfe", "loser": "b"}'),
    ("100k-deep arrays", b"[" * 100_000 + b"]" * 100_000),
    ("100k-deep objects", b'{"a":' * 100_000 + b"1" + b"}" * 100_000),
    ("truncated", b'{"winner": "a", "loser"'),
    ("not JSON", b"winner=a&loser=b"),
    ("empty", b""),
    ("a list", b'[{"winner": "a"}]'),
    ("a number", b"42"),
]


@pytest.mark.parametrize(("what", "content"), BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
def test_every_unreadable_body_gets_the_documented_error_shape(
    client: httpx.Client, what: str, content: bytes
) -> None:
    _register(client, "a", "b")
    before = _state(client)
    for path in ("/api/v1/feedback", "/api/v1/select", "/api/v1/recompute"):
        _refused(client.post(path, content=content, headers=JSON), 422, "invalid_request")
    _refused(client.put("/api/v1/variants/c", content=content, headers=JSON), 422, "invalid_request")
    assert _state(client) == before


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("get", "/nowhere", 404, "not_found"),
        ("get", "/api/v1/feedback", 405, "method_not_allowed"),
        ("delete", "/api/v1/variants/a", 405, "method_not_allowed"),
    ],
)
def test_no_route_and_wrong_method_use_the_error_shape(
    client: httpx.Client, method: str, path: str, status: int, code: str
) -> None:
    _refused(client.request(method, path), status, code)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/variants/%FF", None),
        ("/api/v1/variants/ok%C3", None),
        ("/api/v1/variants/a%00b", None),
        ("/api/v1/variants/tab%09in", None),
        ("/api/v1/feedback", {"winner_model": "\ufffd", "loser_model": "b"}),
        ("/api/v1/feedback", {"winner_model": "a\u0007", "loser_model": "b"}),
        ("/api/v1/feedback", {"winner_model": "\u200b", "loser_model": "b"}),
        # A control character at the end was trimmed away, so "A\n" won as "A": refused like "A\u0007".
        ("/api/v1/feedback", {"winner_model": "a\n", "loser_model": "b"}),
        ("/api/v1/feedback", {"winner_model": "a\t", "loser_model": "b"}),
        ("/api/v1/feedback", {"winner_model": "\ra", "loser_model": "b"}),
        ("/api/v1/variants/trailing%0A", None),
    ],
)
def test_names_must_be_printable_text(client: httpx.Client, path: str, body: dict[str, str] | None) -> None:
    response = client.put(path, json={}) if body is None else client.post(path, json=body)
    _refused(response, 422, "invalid_name")
    assert client.get("/api/v1/variants").json() == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("query", "nul \u0000 inside"),
        ("response", "nul \u0000 inside"),
        ("user_id", "line\nbreak"),
        ("session_id", "x" * 201),
        ("conversation_id", "\ufffd"),
        ("feedback_type", "y" * 65),
        ("idempotency_key", "tab\tkey"),
    ],
)
def test_text_fields_a_database_could_not_store_are_refused(
    client: httpx.Client, field: str, value: str
) -> None:
    _register(client, "a", "b")
    before = _state(client)
    response = client.post("/api/v1/feedback", json={"winner": "a", "loser": "b", field: value})
    _refused(response, 422, "invalid_request")
    assert _state(client) == before


def test_a_control_character_in_a_known_name_is_refused_not_taken_as_that_name(client: httpx.Client) -> None:
    _register(client, "a", "b")
    before = _state(client)
    for winner in ("a\n", "a\u0007", "a\r\n"):
        response = client.post("/api/v1/feedback", json={"winner": winner, "loser": "b"})
        assert _refused(response, 422, "invalid_name")["field"] == "winner"
    response = client.post("/api/v1/feedback", json={"winner": "a", "loser": "b", "category": "math\n"})
    _refused(response, 422, "invalid_name")
    assert _state(client) == before
    spaced = client.post("/api/v1/feedback", json={"winner": " a ", "loser": "b"})
    assert spaced.status_code == 200 and spaced.json()["changes"][0]["variant"] == "a"


@pytest.mark.parametrize(
    "content",
    [
        b'{"winner": "a", "loser": "b", "winner": "b"}',
        b'{"winner": "a", "loser": "b", "tie": false, "tie": true}',
        b'{"winner": "a", "loser": "b", "category": "x", "category": "y"}',
    ],
    ids=["winner", "tie", "category"],
)
def test_a_key_given_twice_in_a_body_is_refused_not_read_as_its_last_value(
    client: httpx.Client, content: bytes
) -> None:
    _register(client, "a", "b")
    before = _state(client)
    error = _refused(client.post("/api/v1/feedback", content=content, headers=JSON), 422, "invalid_request")
    repeated = content.split(b'"')[-4].decode()
    assert error["field"] == repeated and "appears twice" in error["message"]
    assert _state(client) == before
    nested = b'{"candidates": ["a", "b"], "category": null, "strategy": "best", "strategy": "sample"}'
    _refused(client.post("/api/v1/select", content=nested, headers=JSON), 422, "invalid_request")
    same_key_apart = b'{"category_scores": {"math": 1}, "description": "math"}'
    assert client.put("/api/v1/variants/c", content=same_key_apart, headers=JSON).status_code == 200


def test_a_lone_surrogate_is_refused_not_stored(client: httpx.Client) -> None:
    _register(client, "a", "b")
    content = b'{"winner": "a", "loser": "b", "query": "\\ud800"}'
    error = _refused(client.post("/api/v1/feedback", content=content, headers=JSON), 422, "invalid_request")
    assert error["field"] == "query"


def test_healthz_says_up_or_down_and_nothing_else(tmp_path: Path) -> None:
    settings = ServeSettings(db_url=f"sqlite:///{tmp_path / 'secret-place' / 'serve.db'}", token=TOKEN)
    state = ServeState(settings)
    with thread_server(settings, state) as client:
        up = client.get("/healthz", headers={})
        assert up.status_code == 200 and up.json() == {"status": "ok"}
        state.db.close()
        down = client.get("/healthz")
        assert down.status_code == 503 and down.json() == {"status": "down"}
        # Other endpoints say why the database failed, but not where it lives.
        error = _refused(client.get("/api/v1/ratings"), 503, "storage_error")
        assert "secret-place" not in error["message"] and str(tmp_path) not in error["message"]
