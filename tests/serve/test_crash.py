"""``assay serve`` killed with SIGKILL twice under load loses no acknowledged feedback, and the ratings it
restarts with agree with its event log."""

from __future__ import annotations

import asyncio
import random
import signal
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.extras import need
from tests.serve.conftest import AUTH, ServeProcess, start_serve

pytestmark = pytest.mark.e2e

need("serve")

VARIANTS = ["v0", "v1", "v2", "v3"]
FEEDBACKS = 600
KILL_AFTER = 150  # acknowledgements before each SIGKILL
CONCURRENCY = 12


def _plan() -> list[dict[str, Any]]:
    rng = random.Random(11)
    plan = []
    for i in range(FEEDBACKS):
        winner, loser = rng.sample(VARIANTS, 2)
        body: dict[str, Any] = {"winner": winner, "loser": loser, "idempotency_key": f"crash-{i}"}
        if rng.random() < 0.3:
            body["category"] = "math"
        plan.append(body)
    return plan


async def _drive(server: ServeProcess, pending: list[dict[str, Any]], acked: set[str], kill: bool) -> None:
    """Send ``pending`` (removing what is acknowledged); SIGKILL the server after KILL_AFTER acknowledgements."""
    start = len(acked)
    queue = list(reversed(pending))
    async with httpx.AsyncClient(base_url=server.url, headers=AUTH, timeout=30) as client:

        async def worker() -> None:
            while queue:
                body = queue.pop()
                try:
                    response = await client.post("/api/v1/feedback", json=body)
                except httpx.TransportError:
                    queue.append(body)  # not acknowledged: the client sends it again later
                    return
                assert response.status_code == 200, response.text
                acked.add(body["idempotency_key"])
                if kill and len(acked) - start >= KILL_AFTER and server.process.poll() is None:
                    server.process.send_signal(signal.SIGKILL)

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    pending[:] = [body for body in pending if body["idempotency_key"] not in acked]


def test_sigkill_under_load_loses_no_acknowledged_feedback(tmp_path: Path) -> None:
    db_path = tmp_path / "serve.db"
    args = ["--db", f"sqlite:///{db_path}"]
    plan = _plan()
    pending = list(plan)
    acked: set[str] = set()
    for round_ in range(3):
        server = start_serve(args, tmp_path)
        try:
            if round_ == 0:
                with httpx.Client(base_url=server.url, headers=AUTH, timeout=30) as client:
                    for name in VARIANTS:
                        assert client.put(f"/api/v1/variants/{name}", json={}).status_code == 200
            asyncio.run(_drive(server, pending, acked, kill=round_ < 2))
            if round_ < 2:
                assert server.process.wait(30) == -signal.SIGKILL
                with sqlite3.connect(db_path) as conn:
                    stored = {k for (k,) in conn.execute("SELECT idempotency_key FROM serve_feedback_events")}
                assert acked <= stored, f"acknowledged but lost: {sorted(acked - stored)[:5]}"
            else:
                assert not pending and len(acked) == FEEDBACKS
                with httpx.Client(base_url=server.url, timeout=30) as client:
                    board = {r["name"]: r for r in client.get("/api/v1/ratings").json()}
                    replay = client.post("/api/v1/recompute", json={"backend": "elo"}).json()
        finally:
            server.stop()
    with sqlite3.connect(db_path) as conn:
        keys = [k for (k,) in conn.execute("SELECT idempotency_key FROM serve_feedback_events")]
    assert sorted(keys) == sorted(b["idempotency_key"] for b in plan)
    wins = {n: sum(b["winner"] == n for b in plan) for n in VARIANTS}
    losses = {n: sum(b["loser"] == n for b in plan) for n in VARIANTS}
    for name in VARIANTS:
        assert (board[name]["wins"], board[name]["losses"]) == (wins[name], losses[name])
    assert sum(r["rating"] for r in board.values()) == pytest.approx(1500 * len(VARIANTS), abs=1e-6)
    assert replay["events"] == FEEDBACKS
    for row in replay["leaderboard"]:
        assert row["rating"] == pytest.approx(board[row["name"]]["rating"], abs=1e-6)
