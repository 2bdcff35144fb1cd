"""Request limits enforced before anything else reads a request: header count and size, body size and the time
allowed to send the body.

The middleware reads the whole body itself (never more than the limit plus one chunk) and only then hands the
request to the app, so authentication, routing and JSON parsing never see a request that broke a limit. A
refusal is answered in the API's error shape with ``Connection: close``: the rest of a refused body is never
read, and the connection cannot carry another request after it.
"""

from __future__ import annotations

import json

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.serve.errors import ApiError
from assay.serve.settings import ServeSettings


class RequestLimits:
    """ASGI middleware refusing a request whose headers or body break the limits of ``settings``.

    - more than ``max_headers`` headers, or names and values longer than ``max_header_bytes`` together: 431
      ``headers_too_large``;
    - a declared ``Content-Length`` over ``max_body_bytes``: 413 ``body_too_large`` at once, nothing read;
    - a body (chunked, or longer than it said) that grows past ``max_body_bytes`` while it is read: 413
      ``body_too_large``;
    - a body not complete ``body_timeout`` seconds after the headers: 408 ``body_timeout``;
    - a JSON body in which an object holds the same key twice: 422 ``invalid_request`` naming the key.
    """

    def __init__(self, app: ASGIApp, settings: ServeSettings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._check_headers(scope)
        if refusal is None:
            read: bytes | ApiError | None = None
            with anyio.move_on_after(self.settings.body_timeout) as deadline:
                read = await self._read_body(receive)
            if deadline.cancelled_caught:
                seconds = f"{self.settings.body_timeout:g}"
                read = ApiError("body_timeout", f"the body was not received within {seconds} s")
            if read is None:  # the client went away: nobody to answer
                return
            if isinstance(read, bytes):
                parsed = parse_json(read)
                if isinstance(parsed, ApiError):  # JSON takes the last of two: the client meant one of them
                    await _refuse(send, parsed, close=False)
                    return
                if parsed is not NOT_JSON:
                    scope[PARSED] = parsed
                await self.app(scope, _replay(read, receive), send)
                return
            refusal = read
        await _refuse(send, refusal)

    def _check_headers(self, scope: Scope) -> ApiError | None:
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        if len(headers) > self.settings.max_headers:
            return ApiError(
                "headers_too_large",
                f"{len(headers)} headers; at most {self.settings.max_headers} are accepted",
            )
        size = sum(len(name) + len(value) for name, value in headers)
        if size > self.settings.max_header_bytes:
            return ApiError(
                "headers_too_large",
                f"the headers take {size} bytes; at most {self.settings.max_header_bytes} are accepted",
            )
        declared = _content_length(headers)
        if declared is not None and declared > self.settings.max_body_bytes:
            return self._too_large(f"Content-Length is {declared}")
        return None

    async def _read_body(self, receive: Receive) -> bytes | ApiError | None:
        """The whole body; the refusal of one that grows past the limit (its rest left unread); None when the
        client disconnected."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > self.settings.max_body_bytes:
                return self._too_large(f"the body passed {self.settings.max_body_bytes} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    def _too_large(self, what: str) -> ApiError:
        return ApiError(
            "body_too_large", f"{what}; at most {self.settings.max_body_bytes} bytes are accepted"
        )


def _content_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    for name, value in headers:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:  # the HTTP parser refuses it before we see it; nothing to measure here
                return None
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the body already read in one message, then defers to the server's."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


class _Repeated(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    seen: dict[str, object] = {}
    for key, value in pairs:
        if key in seen:
            raise _Repeated(key)
        seen[key] = value
    return seen


NOT_JSON = object()
# The scope key under which the body parsed here is handed on (see :mod:`assay.serve.hot`): parsed once.
PARSED = "assay.json"


def parse_json(body: bytes) -> object:
    """The body parsed as JSON; :data:`NOT_JSON` when it is not JSON (the route's to refuse); the refusal of a
    body in which an object holds a key twice (``{"winner": "a", "winner": "b"}``, which a JSON parser reads as
    its last value)."""
    try:
        return json.loads(body, object_pairs_hook=_pairs)
    except _Repeated as repeated:
        where = repeated.key[:64]
        return ApiError(
            "invalid_request", f"{where}: the key appears twice in the body; send it once", field=where
        )
    except (ValueError, RecursionError):
        return NOT_JSON


async def _refuse(send: Send, error: ApiError, *, close: bool = True) -> None:
    content = json.dumps(error.body()).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(content)).encode()),
        *([(b"connection", b"close")] if close else []),
    ]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": content, "more_body": False})
