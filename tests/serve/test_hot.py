"""The hot endpoints (feedback, select) answered ahead of FastAPI's routing give the answers the FastAPI routes
give, and anything unusual goes on to FastAPI."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from assay.serve.settings import ServeSettings
from tests.extras import need
from tests.serve.conftest import AUTH, TOKEN, asgi_client

need("serve")

from starlette.types import Receive, Scope, Send  # noqa: E402  (after need: the serve extra may be missing)

from assay.serve import hot  # noqa: E402

JSON = {"content-type": "application/json"}
# (path, body, headers): answered by the hot path when well formed, else by FastAPI.
REQUESTS: list[tuple[str, dict[str, Any] | str, dict[str, str]]] = [
    ("/api/v1/feedback", {"winner": "a", "loser": "b"}, AUTH),
    ("/api/v1/feedback", {"winner": "b", "loser": "c", "category": "math", "confidence": 0.5}, AUTH),
    ("/api/v1/feedback", {"winner": "a", "loser": "b", "idempotency_key": "k"}, AUTH),
    ("/api/v1/feedback", {"winner": "a", "loser": "b", "idempotency_key": "k"}, AUTH),  # a retry
    ("/api/v1/feedback", {"winner": "a", "loser": "b"}, {**AUTH, "Idempotency-Key": "h"}),
    ("/api/v1/feedback", {"winner": "a", "loser": "ghost"}, AUTH),  # unknown variant: 404
    ("/api/v1/feedback", {"winner": "a", "loser": "a"}, AUTH),  # self comparison: 422
    ("/api/v1/feedback", {"winner": "c", "loser": "b", "category": "art"}, AUTH),  # c serves math only
    ("/api/v1/feedback", {"winner": "a", "loser": "b", "confidence": "0.5"}, AUTH),  # a string: 422
    ("/api/v1/feedback", {"winner": "a", "loser": "b", "surprise": 1}, AUTH),  # unknown field: 422
    ("/api/v1/feedback", ["a", "b"], AUTH),  # not an object
    ("/api/v1/feedback", {"winner": "a", "loser": "b"}, {}),  # no token: 401
    ("/api/v1/feedback", {"winner": "a", "loser": "b"}, {"Authorization": "Bearer wrong"}),
    ("/api/v1/feedback", '{"winner": "a", "winner": "b"}', AUTH),  # a key twice: the limits refuse it
    ("/api/v1/feedback", "not json", AUTH),
    ("/api/v1/select", {"candidates": ["a", "b", "c"]}, {}),
    ("/api/v1/select", {"candidates": ["a", "b"], "category": "math", "cost_weight": 1}, {}),
    ("/api/v1/select", {}, {}),
    ("/api/v1/select", {"candidates": ["ghost"]}, {}),  # unknown: 404
    ("/api/v1/select", {"candidates": ["a"], "category": "art", "strategy": "best"}, {}),
    ("/api/v1/select", {"candidates": "a"}, {}),  # not a list: 422
    ("/api/v1/select", {"cost_weight": -1}, {}),
]
# The requests the hot path answers itself (the rest go on to FastAPI).
HOT = {0, 1, 2, 3, 4, 5, 6, 7, 15, 16, 17, 18, 19, 21}


def _comparable(response: httpx.Response) -> tuple[int, Any]:
    """Status and body, with the time of recording taken out (it differs between two runs)."""
    body = response.json()
    if isinstance(body, dict):
        body.pop("timestamp", None)
    return response.status_code, body


async def _answers(tmp_path: Path, name: str) -> list[tuple[int, Any]]:
    settings = ServeSettings(db_url=f"sqlite:///{tmp_path / name}", token=TOKEN)
    async with asgi_client(settings) as client:
        for variant, body in (("a", {}), ("b", {}), ("c", {"categories": ["math"]})):
            response = await client.put(f"/api/v1/variants/{variant}", json=body, headers=AUTH)
            assert response.status_code == 200, response.text
        answers = []
        for number, (path, body, headers) in enumerate(REQUESTS):
            headers = {**headers, "X-Request-Number": str(number)}
            if isinstance(body, str):
                response = await client.post(path, content=body, headers={**JSON, **headers})
            else:
                response = await client.post(path, json=body, headers=headers)
            answers.append(_comparable(response))
        text = (await client.get("/metrics")).text
        answers.append((200, sorted(set(re.findall(r'route="([^"]+)"', text)))))
    return answers


async def test_the_hot_path_answers_as_the_fastapi_routes_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reached: set[int] = set()
    passed_on: set[int] = set()
    original = hot.HotRoutes.__call__

    async def counting(self: hot.HotRoutes, scope: Scope, receive: Receive, send: Send) -> None:
        number = dict(scope["headers"]).get(b"x-request-number")
        if number is None:
            await original(self, scope, receive, send)
            return
        reached.add(int(number))
        inner = self.app

        async def on(scope: Scope, receive: Receive, send: Send) -> None:
            passed_on.add(int(number))
            await inner(scope, receive, send)

        self.app = on
        try:
            await original(self, scope, receive, send)
        finally:
            self.app = inner

    monkeypatch.setattr(hot.HotRoutes, "__call__", counting)
    fast = await _answers(tmp_path, "hot.db")
    # A body in which a key appears twice is refused by the limits before this middleware sees it.
    assert reached == set(range(len(REQUESTS))) - {13}
    assert reached - passed_on == HOT

    async def fastapi_only(self: hot.HotRoutes, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    monkeypatch.setattr(hot.HotRoutes, "__call__", fastapi_only)
    slow = await _answers(tmp_path, "fastapi.db")
    assert fast == slow
    assert fast[-1][1] == ["/api/v1/feedback", "/api/v1/select", "/api/v1/variants/{name}"]
    assert [status for status, _ in fast[:8]] == [200, 200, 200, 200, 200, 404, 422, 409]
    assert fast[3][1]["duplicate"] is True and fast[3][1]["event_id"] == fast[2][1]["event_id"]
