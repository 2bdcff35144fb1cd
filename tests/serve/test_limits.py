"""Request limits: the middleware on its own (a fake server's receive and send), the app in-process, and a real
``assay serve`` refusing a 200 MB body without a token quickly and without reading it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from assay.serve.settings import ServeSettings
from tests.extras import need
from tests.serve.conftest import AUTH, TOKEN, asgi_client, serve_env, start_serve

need("serve")

from assay.serve.limits import RequestLimits  # noqa: E402  (after need: the serve extra may be missing)

LIMITS = ServeSettings(max_body_bytes=1000, body_timeout=5.0, max_headers=10, max_header_bytes=500)


@dataclass
class Exchange:
    """What the middleware did with one request: the messages it sent, and what reached the app."""

    sent: list[dict[str, Any]]
    app_body: bytes | None
    received: int

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])

    @property
    def headers(self) -> dict[bytes, bytes]:
        return dict(self.sent[0]["headers"])

    @property
    def error(self) -> dict[str, Any]:
        body: dict[str, Any] = json.loads(self.sent[1]["body"])
        assert list(body) == ["error"]
        return body["error"]  # type: ignore[no-any-return]


def _exchange(
    chunks: list[bytes],
    headers: list[tuple[bytes, bytes]] | None = None,
    settings: ServeSettings = LIMITS,
    pause: float = 0.0,
    ends: bool = True,
) -> Exchange:
    """Run one request through :class:`RequestLimits` in front of an app that reads its body and answers 200;
    ``pause`` seconds before each chunk; a body that does not end waits for more after its chunks."""
    pending = list(chunks)
    received = 0
    app_body: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not pending:
            await asyncio.sleep(3600)  # a connection left open: only a disconnect would come
        await asyncio.sleep(pause)
        received += 1
        chunk = pending.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(pending) or not ends}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        app_body.append(body)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers or []}
    asyncio.run(RequestLimits(app, settings)(scope, receive, send))  # type: ignore[arg-type]
    return Exchange(sent, app_body[0] if app_body else None, received)


def _refused(exchange: Exchange, status: int, code: str) -> dict[str, Any]:
    assert exchange.status == status
    assert exchange.headers[b"connection"] == b"close"
    assert exchange.headers[b"content-type"] == b"application/json"
    assert exchange.app_body is None
    error = exchange.error
    assert error["code"] == code and error["message"] and "\n" not in error["message"]
    return error


def test_a_body_within_the_limits_reaches_the_app_whole() -> None:
    exchange = _exchange([b"a" * 400, b"b" * 400, b"c" * 200], [(b"content-length", b"1000")])
    assert exchange.status == 200 and exchange.app_body == b"a" * 400 + b"b" * 400 + b"c" * 200


def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    exchange = _exchange([b"x" * 1001], [(b"content-length", b"1001")])
    error = _refused(exchange, 413, "body_too_large")
    assert exchange.received == 0
    assert "1001" in error["message"] and "1000" in error["message"]


def test_a_chunked_body_is_refused_as_soon_as_it_passes_the_limit() -> None:
    exchange = _exchange([b"x" * 300] * 50, [(b"transfer-encoding", b"chunked")])
    _refused(exchange, 413, "body_too_large")
    assert exchange.received == 4  # 1,200 bytes: the 46 chunks after the limit are never read


def test_a_body_longer_than_it_declared_is_refused_too() -> None:
    _refused(_exchange([b"x" * 600, b"x" * 600], [(b"content-length", b"10")]), 413, "body_too_large")


def test_a_body_slower_than_the_deadline_is_refused() -> None:
    settings = ServeSettings(body_timeout=0.3)
    started = time.monotonic()
    exchange = _exchange([b"x"] * 100, settings=settings, pause=0.05)
    _refused(exchange, 408, "body_timeout")
    assert time.monotonic() - started < 2
    assert 0 < exchange.received < 100


def test_a_body_that_never_ends_is_refused_at_the_deadline() -> None:
    exchange = _exchange([b'{"winner": '], settings=ServeSettings(body_timeout=0.2), ends=False)
    _refused(exchange, 408, "body_timeout")
    assert exchange.received == 1


def test_too_many_headers_are_refused() -> None:
    fits = [(f"x-{i}".encode(), b"1") for i in range(10)]
    assert _exchange([b""], fits).status == 200
    error = _refused(_exchange([b""], [*fits, (b"x-10", b"1")]), 431, "headers_too_large")
    assert "11 headers" in error["message"]


def test_headers_too_large_together_are_refused() -> None:
    assert _exchange([b""], [(b"cookie", b"c" * 494)]).status == 200
    _refused(_exchange([b""], [(b"cookie", b"c" * 495)]), 431, "headers_too_large")


def test_a_client_gone_before_its_body_ended_gets_no_answer() -> None:
    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def app(*_: Any) -> None:
        raise AssertionError("the app must not run")

    scope = {"type": "http", "method": "POST", "path": "/", "headers": []}
    asyncio.run(RequestLimits(app, LIMITS)(scope, receive, send))  # type: ignore[arg-type]
    assert sent == []


@pytest.mark.parametrize(
    "overrides",
    [{"max_body_bytes": 0}, {"body_timeout": 0.0}, {"body_timeout": float("inf")}, {"max_headers": 0}],
)
def test_limits_must_be_positive(overrides: dict[str, Any]) -> None:
    from assay.errors import AssayError

    with pytest.raises(AssayError, match=next(iter(overrides))):
        ServeSettings(**overrides)


# The app in-process (httpx's ASGI transport: no socket, no server).


@pytest.fixture
async def small_app(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """The app in-process with the token and a 4 KiB body limit."""
    settings = ServeSettings(db_url=f"sqlite:///{tmp_path / 'serve.db'}", token=TOKEN, max_body_bytes=4096)
    async with asgi_client(settings) as client:
        yield client


async def test_the_limit_comes_before_authentication(small_app: httpx.AsyncClient) -> None:
    big = b'{"winner": "' + b"a" * 5000 + b'"}'
    response = await small_app.post("/api/v1/feedback", content=big)
    assert response.status_code == 413 and response.headers["connection"] == "close"
    assert response.json()["error"]["code"] == "body_too_large"

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(100):
            yield b" " * 1000

    streamed = await small_app.post("/api/v1/feedback", content=chunks())
    assert streamed.status_code == 413 and streamed.json()["error"]["code"] == "body_too_large"
    small = await small_app.post("/api/v1/feedback", json={"winner": "a", "loser": "b"})
    assert small.status_code == 401 and small.json()["error"]["code"] == "unauthorized"


async def test_a_body_at_the_limit_is_served(small_app: httpx.AsyncClient) -> None:
    description = "d" * (4096 - len('{"description": ""}'))
    body = json.dumps({"description": description}).encode()
    assert len(body) == 4096
    headers = {**AUTH, "Content-Type": "application/json"}
    response = await small_app.put("/api/v1/variants/a", content=body, headers=headers)
    assert response.status_code == 200, response.text
    assert response.json()["description"] == description


async def test_too_many_headers_are_refused_by_the_app(small_app: httpx.AsyncClient) -> None:
    headers = {f"x-h{i}": "1" for i in range(120)}
    response = await small_app.get("/api/v1/variants", headers=headers)
    assert response.status_code == 431 and response.json()["error"]["code"] == "headers_too_large"
    assert (await small_app.get("/api/v1/variants")).status_code == 200


# A real server: a 200 MB body without a token, three ways.

BIG = 200 * 1024 * 1024
PIECE = 64 * 1024


@dataclass
class Refusal:
    """How a real server answered a body it should refuse."""

    status: int
    headers: dict[str, str]
    body: dict[str, Any]
    seconds: float
    closed: bool
    sent: int


def _send_big(url: str, mode: str) -> Refusal:
    """POST 200 MB of feedback without a token (``declared``: Content-Length; ``chunked``: chunked encoding;
    ``drip``: chunked in 4 KiB pieces with a millisecond's pause) while reading the answer as it comes."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    framing = f"Content-Length: {BIG}" if mode == "declared" else "Transfer-Encoding: chunked"
    head = f"POST /api/v1/feedback HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{framing}\r\n\r\n"
    stop = threading.Event()
    sent = [0]

    def pieces() -> Iterator[bytes]:
        size = 4096 if mode == "drip" else PIECE
        for _ in range(BIG // size):
            data = b"x" * size
            yield data if mode == "declared" else f"{size:x}\r\n".encode() + data + b"\r\n"
        if mode != "declared":
            yield b"0\r\n\r\n"

    def sender() -> None:
        try:
            sock.sendall(head.encode())
            for piece in pieces():
                if stop.is_set():
                    return
                sock.sendall(piece)
                sent[0] += len(piece)
                if mode == "drip":
                    time.sleep(0.001)
        except OSError:  # the server closed the connection under us: what we expect
            return

    started = time.monotonic()
    thread = threading.Thread(target=sender, daemon=True)
    thread.start()
    try:
        raw = b""
        while b"\r\n\r\n" not in raw:
            data = sock.recv(65536)
            assert data, f"closed without an answer after {sent[0]} bytes"
            raw += data
        head_bytes, _, rest = raw.partition(b"\r\n\r\n")
        lines = head_bytes.decode().split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        while len(rest) < int(headers["content-length"]):
            rest += sock.recv(65536)
        seconds = time.monotonic() - started
        try:
            closed = sock.recv(65536) == b""
        except ConnectionResetError:  # closed with our unread bytes in its buffer: a reset, still closed
            closed = True
        return Refusal(int(lines[0].split()[1]), headers, json.loads(rest), seconds, closed, sent[0])
    finally:
        stop.set()
        sock.close()
        thread.join(10)


def _rss(pid: int, field: str = "VmRSS") -> int:
    """A process's resident memory (``VmRSS``) or its peak (``VmHWM``), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for {pid}")


@pytest.mark.e2e
def test_a_real_server_refuses_200_mb_without_a_token_quickly_and_without_reading_it(tmp_path: Path) -> None:
    server = start_serve(["--db", f"sqlite:///{tmp_path / 'serve.db'}"], tmp_path, env=serve_env())
    pid = server.process.pid
    try:
        assert httpx.get(server.url + "/healthz", timeout=10).status_code == 200
        before = _rss(pid)
        figures = []
        for mode in ("declared", "chunked", "drip"):
            refusal = _send_big(server.url, mode)
            grown = _rss(pid, "VmHWM") - before
            now = (_rss(pid) - before) / 2**20
            figures.append(
                f"{mode}: {refusal.status} in {refusal.seconds:.3f} s after {refusal.sent / 2**20:.1f} MB sent, "
                f"RSS +{now:.1f} MB (peak +{grown / 2**20:.1f} MB)"
            )
            assert refusal.status == 413, (mode, refusal)
            assert refusal.body["error"]["code"] == "body_too_large"
            assert refusal.headers["connection"] == "close" and refusal.closed, (mode, refusal)
            assert refusal.seconds < 3, (mode, refusal.seconds)
            assert grown < 100 * 2**20, (mode, grown)
        print("; ".join(figures))
        # Still serving, and still asking for the token.
        with httpx.Client(base_url=server.url, timeout=10) as client:
            assert client.post("/api/v1/feedback", json={"winner": "a"}).status_code == 401
    finally:
        server.stop()


@pytest.mark.e2e
def test_a_real_server_refuses_a_dripped_small_body_at_its_deadline(tmp_path: Path) -> None:
    server = start_serve(
        ["--db", f"sqlite:///{tmp_path / 'serve.db'}", "--body-timeout", "1"], tmp_path, env=serve_env()
    )
    try:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            started = time.monotonic()
            sock.sendall(b"POST /api/v1/feedback HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
            raw = b""
            sock.settimeout(0.2)
            while b"body_timeout" not in raw:
                assert time.monotonic() - started < 5, raw
                try:
                    data = sock.recv(65536)
                except TimeoutError:
                    sock.sendall(b" ")  # one byte of the body every 0.2 s
                    continue
                assert data, raw
                raw += data
            assert time.monotonic() - started < 3
            assert raw.startswith(b"HTTP/1.1 408 ") and b"connection: close" in raw.lower()
            sock.settimeout(5)
            with contextlib.suppress(ConnectionResetError):
                assert sock.recv(65536) == b""
    finally:
        server.stop()


@pytest.mark.e2e
def test_a_real_server_refuses_headers_over_the_limits(tmp_path: Path) -> None:
    server = start_serve(["--db", f"sqlite:///{tmp_path / 'serve.db'}"], tmp_path, env=serve_env())
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            many = client.get("/api/v1/variants", headers={f"x-h{i}": "1" for i in range(101)})
            assert many.status_code == 431 and many.json()["error"]["code"] == "headers_too_large"
            assert many.headers["connection"] == "close"
            large = client.get("/api/v1/variants", headers={"x-big": "b" * (64 * 1024)})
            assert large.status_code == 431 and large.json()["error"]["code"] == "headers_too_large"
            # A head still arriving past twice the limit is cut off by the HTTP parser: its own 400, which a
            # client still sending may not see before the reset of a connection closed with bytes unread.
            try:
                huge = client.get("/api/v1/variants", headers={"x-big": "b" * (1024 * 1024)})
                assert huge.status_code == 400 and huge.headers["connection"] == "close"
            except httpx.ReadError as exc:
                assert "reset" in str(exc).lower(), exc
            fits = client.get("/api/v1/variants", headers={"x-big": "b" * (60 * 1024)})
            assert fits.status_code == 200
    finally:
        server.stop()
