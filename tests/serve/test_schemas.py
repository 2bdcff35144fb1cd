"""Request bodies take JSON's types as they are: a string or a boolean where a number (or a boolean) belongs is
``invalid_request`` and records nothing; an integer where a float belongs is taken (the app in-process)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from assay.serve.schemas import FeedbackIn, RecomputeIn, SelectIn, VariantIn
from tests.extras import need
from tests.serve.conftest import AUTH

need("serve")

# (method, path, a valid body without the field, the field, a value of the right type)
NUMERIC = [
    ("post", "/api/v1/feedback", {"winner": "a", "loser": "b"}, "confidence", 0.5),
    ("post", "/api/v1/feedback", {"winner": "a", "loser": "b"}, "timestamp", 1_700_000_000.5),
    ("post", "/api/v1/select", {}, "cost_weight", 0.5),
    ("put", "/api/v1/variants/c", {}, "cost_per_1m_tokens", 2.5),
    ("post", "/api/v1/recompute", {}, "half_life_days", 7.5),
]
WRONG = ["0.5", True, False]


def _scalar_fields(model: type[BaseModel]) -> set[str]:
    """The fields of a request body whose type allows a number or a boolean (at any depth of the annotation)."""
    found = set()
    for name, field in model.model_fields.items():
        text = repr(field.annotation)
        if any(word in text for word in ("float", "int", "bool")):
            found.add(name)
    return found


def test_every_number_and_boolean_of_every_request_body_is_tested_strictly() -> None:
    # The walk over the request models: a field added later without a strictness test fails here.
    tested = {field for *_, field, _ in NUMERIC} | {"tie", "category_scores"}
    bodies = (FeedbackIn, SelectIn, VariantIn, RecomputeIn)
    found = {name for body in bodies for name in _scalar_fields(body)}
    assert found == tested
    assert all(body.model_config.get("strict") for body in bodies)


async def _register(client: httpx.AsyncClient, *names: str) -> None:
    for name in names:
        response = await client.put(f"/api/v1/variants/{name}", json={}, headers=AUTH)
        assert response.status_code == 200, response.text


async def _state(client: httpx.AsyncClient) -> tuple[Any, ...]:
    ratings = (await client.get("/api/v1/ratings")).json()
    return ratings, (await client.get("/api/v1/variants")).json()


async def _send(client: httpx.AsyncClient, method: str, path: str, body: Any) -> httpx.Response:
    return await client.request(method, path, json=body, headers=AUTH)


def _refused(response: httpx.Response, field: str) -> None:
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and error["field"].startswith(field), error


@pytest.mark.parametrize("wrong", WRONG, ids=repr)
@pytest.mark.parametrize(("method", "path", "base", "field", "right"), NUMERIC, ids=[n[3] for n in NUMERIC])
async def test_a_string_or_a_boolean_for_a_number_is_refused(
    app_client: httpx.AsyncClient,
    method: str,
    path: str,
    base: dict[str, Any],
    field: str,
    right: Any,
    wrong: Any,
) -> None:
    await _register(app_client, "a", "b")
    before = await _state(app_client)
    _refused(await _send(app_client, method, path, {**base, field: wrong}), field)
    assert await _state(app_client) == before
    taken = await _send(app_client, method, path, {**base, field: right})
    assert taken.status_code == 200, taken.text


@pytest.mark.parametrize(("method", "path", "base", "field", "right"), NUMERIC, ids=[n[3] for n in NUMERIC])
async def test_an_integer_for_a_float_is_taken(
    app_client: httpx.AsyncClient, method: str, path: str, base: dict[str, Any], field: str, right: Any
) -> None:
    await _register(app_client, "a", "b")
    response = await _send(app_client, method, path, {**base, field: int(right)})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("wrong", WRONG, ids=repr)
async def test_a_category_score_must_be_a_number(app_client: httpx.AsyncClient, wrong: Any) -> None:
    _refused(
        await _send(app_client, "put", "/api/v1/variants/a", {"category_scores": {"math": wrong}}), "category"
    )
    assert (await app_client.get("/api/v1/variants")).json() == []
    taken = await _send(
        app_client, "put", "/api/v1/variants/a", {"category_scores": {"math": 1, "code": 0.5}}
    )
    assert taken.status_code == 200 and taken.json()["seeded"] == {"math": 2000.0, "code": 1500.0}


@pytest.mark.parametrize("wrong", ["true", 1, 0, "yes"], ids=repr)
async def test_tie_must_be_a_boolean(app_client: httpx.AsyncClient, wrong: Any) -> None:
    await _register(app_client, "a", "b")
    before = await _state(app_client)
    _refused(
        await _send(app_client, "post", "/api/v1/feedback", {"winner": "a", "loser": "b", "tie": wrong}),
        "tie",
    )
    assert await _state(app_client) == before


async def test_confidence_as_a_string_records_nothing_not_a_coerced_half(
    app_client: httpx.AsyncClient,
) -> None:
    await _register(app_client, "a", "b")
    _refused(
        await _send(app_client, "post", "/api/v1/feedback", {"winner": "a", "confidence": "0.5"}),
        "confidence",
    )
    recorded = await _send(
        app_client, "post", "/api/v1/feedback", {"winner": "a", "loser": "b", "confidence": 1}
    )
    assert recorded.json()["confidence"] == 1.0 and recorded.json()["event_id"] == 1


@pytest.mark.parametrize(
    "timestamp",
    [
        1_700_000_000,
        1_700_000_000.25,
        "2025-01-02T03:04:05Z",
        "2025-01-02T03:04:05+02:00",
        "2025-01-02 03:04:05",
    ],
    ids=repr,
)
async def test_a_timestamp_is_unix_seconds_or_an_rfc_3339_time(
    app_client: httpx.AsyncClient, timestamp: Any
) -> None:
    await _register(app_client, "a", "b")
    body = {"winner": "a", "loser": "b", "timestamp": timestamp}
    response = await _send(app_client, "post", "/api/v1/feedback", body)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("timestamp", [True, "yesterday", "1700000000", [1], {"s": 1}], ids=repr)
async def test_any_other_timestamp_is_refused(app_client: httpx.AsyncClient, timestamp: Any) -> None:
    await _register(app_client, "a", "b")
    before = await _state(app_client)
    body = {"winner": "a", "loser": "b", "timestamp": timestamp}
    _refused(await _send(app_client, "post", "/api/v1/feedback", body), "timestamp")
    assert await _state(app_client) == before
