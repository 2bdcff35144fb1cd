"""Servers for the serve tests: the app in-process (no socket), under uvicorn in a thread, and real
``assay serve`` subprocesses."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from assay.serve.settings import ServeSettings
from assay.serve.state import ServeState
from tests.layers import e2e_fixture
from tests.pg import running_postgres

try:
    import uvicorn

    from assay.serve.app import create_app
    from assay.serve.server import bind
except ImportError:  # the serve extra is missing: the HTTP fixtures skip, the pure tests still run
    uvicorn = None  # type: ignore[assignment]

SERVE_EXTRA = "the serve extra is not installed (pip install 'assay[serve]')"
TOKEN = "test-token-123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
LISTENING = re.compile(r"listening on (http://\S+)")


@pytest.fixture(scope="module")
@e2e_fixture("a PostgreSQL server")
def pg_server() -> Iterator[str]:
    """A throwaway PostgreSQL server on loopback for the module; its base URL (add a database with
    :func:`tests.pg.create_database`)."""
    with running_postgres() as base:
        yield base


@asynccontextmanager
async def asgi_client(settings: ServeSettings) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the app on ``settings`` in this process, through httpx's ASGI transport (no socket, no
    server: the fast layer may use it); it sends no token unless a request adds it."""
    if uvicorn is None:
        pytest.skip(SERVE_EXTRA)
    state = ServeState(settings)
    transport = httpx.ASGITransport(app=create_app(settings, state))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://assay") as client:
            yield client
    finally:
        state.close()


@pytest.fixture
async def app_client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the app in-process on a SQLite file in tmp_path, with the token set (see :func:`asgi_client`)."""
    async with asgi_client(ServeSettings(db_url=f"sqlite:///{tmp_path / 'serve.db'}", token=TOKEN)) as client:
        yield client


@contextmanager
def thread_server(settings: ServeSettings, state: ServeState | None = None) -> Iterator[httpx.Client]:
    """The app on ``settings`` (and ``state`` when given) under uvicorn in a thread on 127.0.0.1; yields a
    client with the token."""
    if uvicorn is None:
        pytest.skip(SERVE_EXTRA)
    app = create_app(settings, state)
    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=AUTH, timeout=30) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
        app.state.serve.close()


@pytest.fixture
@e2e_fixture("a server (uvicorn on loopback)")
def make_server(tmp_path: Path) -> Iterator[Callable[..., httpx.Client]]:
    """Start thread servers: ``make_server(**settings)`` (default: a SQLite file in tmp_path and the token)."""
    stack: list[object] = []

    def start(**overrides: object) -> httpx.Client:
        values: dict[str, object] = {"db_url": f"sqlite:///{tmp_path / 'serve.db'}", "token": TOKEN}
        values.update(overrides)
        manager = thread_server(ServeSettings(**values))  # type: ignore[arg-type]
        client = manager.__enter__()
        stack.append(manager)
        return client

    yield start
    for manager in reversed(stack):
        manager.__exit__(None, None, None)  # type: ignore[attr-defined]


@pytest.fixture
def client(make_server: Callable[..., httpx.Client]) -> httpx.Client:
    """A client of a fresh server with the token set (writes need it, reads are open)."""
    return make_server()


@dataclass
class ServeProcess:
    """A running ``assay serve`` subprocess and the URL it printed."""

    process: subprocess.Popen[str]
    url: str
    lines: list[str] = field(default_factory=list)

    def stop(self) -> None:
        """Stop it (SIGTERM, then SIGKILL) and wait."""
        stop_process(self.process)


def stop_process(process: subprocess.Popen[str]) -> None:
    """Stop a spawned server (SIGTERM, then SIGKILL) and wait for it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def serve_env(**extra: str) -> dict[str, str]:
    """The environment of a serve subprocess: this one, plus the token and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.update({"ASSAY_SERVE_TOKEN": TOKEN, **extra})
    return env


def spawn_serve(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start ``assay serve --port 0 ARGS`` without waiting (see :func:`wait_listening`)."""
    command = [sys.executable, "-m", "assay", "serve", "--port", "0", *args]
    return subprocess.Popen(
        command, cwd=cwd, env=env or serve_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def wait_listening(process: subprocess.Popen[str], timeout: float = 60) -> ServeProcess:
    """Wait for the ``listening on`` line of a spawned server."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    lines: list[str] = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        found = LISTENING.search(line)
        if found:
            return ServeProcess(process, found.group(1), lines)
    process.kill()
    _, err = process.communicate(timeout=10)
    raise AssertionError(f"assay serve did not start: {''.join(lines)} {err}")


def start_serve(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> ServeProcess:
    """Run ``assay serve --port 0 ARGS`` and wait for its ``listening on`` line."""
    return wait_listening(spawn_serve(args, cwd, env), timeout)


def run_serve(args: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``assay serve ARGS`` to its end: a start expected to fail before listening, or a one-shot command."""
    command = [sys.executable, "-m", "assay", "serve", *args]
    return subprocess.run(command, cwd=cwd, env=serve_env(), capture_output=True, text=True, timeout=timeout)
