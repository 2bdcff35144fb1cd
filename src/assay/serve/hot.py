"""The two endpoints every client calls on every request, ``POST /api/v1/feedback`` and ``POST /api/v1/select``,
answered ahead of FastAPI's routing.

FastAPI's way to an endpoint (its exception and exit-stack middleware, routing, dependency solving, reading and
parsing the body again) cost as much CPU per feedback as the feedback's own database work. This middleware runs
after the request limits (which have read and parsed the body once) and the latency metric, and answers a
well-formed request with the same function the FastAPI route calls, the same checks in the same order, the same
body and the same error shapes. Anything else (a body that is not a JSON object of the right shape, a missing or
wrong token, another content type, a repeated header) goes on to FastAPI, which answers it as before: the routes
stay the one description of the API (``/docs``) and of its refusals.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError
from starlette.types import ASGIApp, Receive, Scope, Send

from assay.serve.auth import authorized
from assay.serve.limits import PARSED
from assay.serve.responses import error_response, json_response
from assay.serve.routes import feedback, select
from assay.serve.schemas import FeedbackIn, SelectIn
from assay.serve.state import ServeState

FEEDBACK = "/api/v1/feedback"
SELECT = "/api/v1/select"
_WANTED = (b"authorization", b"content-type", b"idempotency-key")


@dataclass(frozen=True)
class _Route:
    path: str


_ROUTES = {FEEDBACK: _Route(FEEDBACK), SELECT: _Route(SELECT)}


class HotRoutes:
    """ASGI middleware answering well-formed feedback and select requests; the rest goes on to ``app``."""

    def __init__(self, app: ASGIApp, state: ServeState) -> None:
        self.app = app
        self.state = state
        self.settings = state.settings
        self._answer: dict[str, Callable[[object, dict[bytes, bytes]], Awaitable[BaseModel] | None]] = {
            FEEDBACK: self._feedback,
            SELECT: self._select,
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        answer = self._answer.get(scope["path"]) if scope["type"] == "http" else None
        if answer is None or scope["method"] != "POST" or scope.get("root_path") or PARSED not in scope:
            await self.app(scope, receive, send)
            return
        headers = _headers(scope["headers"])
        content_type = headers.get(b"content-type") if headers is not None else None
        if content_type is None or content_type.split(b";", 1)[0].strip().lower() != b"application/json":
            await self.app(scope, receive, send)
            return
        assert headers is not None
        try:
            pending = answer(scope[PARSED], headers)
        except ValidationError:  # FastAPI's refusal of the body names the field as it always has
            pending = None
        if pending is None:
            await self.app(scope, receive, send)
            return
        # What the latency metric labels the request with (the path template), as FastAPI's routing would set.
        scope["route"] = _ROUTES[scope["path"]]
        try:
            response = json_response(await pending)
        except Exception as exc:
            response = error_response(exc)
        await response(scope, receive, send)

    def _feedback(self, body: object, headers: dict[bytes, bytes]) -> Awaitable[BaseModel] | None:
        if not authorized(self.settings, headers.get(b"authorization", b"").decode("latin-1")):
            return None
        parsed = FeedbackIn.model_validate(body)
        key = headers.get(b"idempotency-key")
        return feedback(self.state, parsed, None if key is None else key.decode("latin-1"))

    def _select(self, body: object, headers: dict[bytes, bytes]) -> Awaitable[BaseModel] | None:
        if self.settings.require_token_for_reads and not authorized(
            self.settings, headers.get(b"authorization", b"").decode("latin-1")
        ):
            return None
        parsed = SelectIn.model_validate(body)
        return select(self.state, parsed)


def _headers(raw: list[tuple[bytes, bytes]]) -> dict[bytes, bytes] | None:
    """The headers the hot endpoints read, by lower-case name; None when one of them is repeated (FastAPI then
    decides which one counts)."""
    found: dict[bytes, bytes] = {}
    for name, value in raw:
        lowered = name.lower()
        if lowered in _WANTED:
            if lowered in found:
                return None
            found[lowered] = value
    return found
