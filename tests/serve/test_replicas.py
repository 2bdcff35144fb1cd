"""Two ``assay serve`` processes on one real PostgreSQL: thousands of concurrent feedbacks, nothing lost."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.extras import need
from tests.pg import create_database
from tests.serve.conftest import AUTH, spawn_serve, stop_process, wait_listening

pytestmark = pytest.mark.e2e

need("serve")

VARIANTS = ["v0", "v1", "v2", "v3", "v4"]
FEEDBACKS = 1900
RETRIED = 100
CONCURRENCY = 32


@pytest.fixture(scope="module")
def pg_url(pg_server: str) -> str:
    return create_database(pg_server)


def _plan(seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    plan: list[dict[str, Any]] = []
    for i in range(FEEDBACKS):
        a, b = rng.sample(VARIANTS, 2)
        roll = rng.random()
        body: dict[str, Any] = {"idempotency_key": f"fb-{i}"}
        if roll < 0.8:
            body |= {"winner": a, "loser": b}
        elif roll < 0.9:
            body |= {"winner": a, "loser": b, "tie": True}
        elif roll < 0.95:
            body |= {"winner": a}
        else:
            body |= {"loser": a}
        if rng.random() < 0.3:
            body["category"] = rng.choice(["math", "code"])
        plan.append(body)
    return plan


async def _send_all(urls: list[str], plan: list[dict[str, Any]]) -> list[int]:
    # Every RETRIED-th feedback is also sent to the other replica at the same time: a client retry.
    jobs = [(urls[i % 2], body) for i, body in enumerate(plan)]
    jobs += [(urls[(i + 1) % 2], plan[i]) for i in range(0, FEEDBACKS, FEEDBACKS // RETRIED)]
    random.Random(1).shuffle(jobs)
    queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)
    statuses: list[int] = []
    limits = httpx.Limits(max_connections=CONCURRENCY)
    async with httpx.AsyncClient(headers=AUTH, timeout=60, limits=limits) as client:

        async def worker() -> None:
            while not queue.empty():
                url, body = queue.get_nowait()
                for attempt in range(3):
                    # A client retries a dropped connection; the idempotency key makes that safe.
                    try:
                        response = await client.post(f"{url}/api/v1/feedback", json=body)
                        break
                    except httpx.TransportError:
                        if attempt == 2:
                            raise
                statuses.append(response.status_code)

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return statuses


def test_two_replicas_on_postgresql_lose_no_update(pg_url: str, tmp_path: Path) -> None:
    spawned = [spawn_serve(["--db", pg_url], tmp_path) for _ in range(2)]
    try:
        replicas = [wait_listening(process) for process in spawned]
        urls = [r.url for r in replicas]
        with httpx.Client(headers=AUTH, timeout=30) as client:
            for i, name in enumerate(VARIANTS):
                response = client.put(f"{urls[i % 2]}/api/v1/variants/{name}", json={})
                assert response.status_code == 200, response.text
        plan = _plan()
        started = time.monotonic()
        statuses = asyncio.run(_send_all(urls, plan))
        elapsed = time.monotonic() - started
        assert Counter(statuses) == {200: FEEDBACKS + RETRIED}, Counter(statuses)

        wins: Counter[str] = Counter()
        losses: Counter[str] = Counter()
        ties: Counter[str] = Counter()
        one_sided = 0.0
        for body in plan:
            if "winner" in body and "loser" in body:
                (ties if body.get("tie") else wins)[body["winner"]] += 1
                (ties if body.get("tie") else losses)[body["loser"]] += 1
            else:
                one_sided += 3.2 if "winner" in body else -3.2
        with httpx.Client(timeout=30) as client:
            for url in urls:
                board = {r["name"]: r for r in client.get(f"{url}/api/v1/ratings").json()}
                for name in VARIANTS:
                    r = board[name]
                    assert (r["wins"], r["losses"], r["ties"]) == (wins[name], losses[name], ties[name])
                    assert r["comparisons"] == wins[name] + losses[name] + ties[name]
                total = sum(r["rating"] for r in board.values())
                assert total == pytest.approx(1500 * len(VARIANTS) + one_sided, abs=1e-6)
            metrics = client.get(f"{urls[0]}/metrics").text
            recorded = sum(
                float(line.split()[-1])
                for line in metrics.splitlines()
                if line.startswith("assay_serve_feedback_total")
            )
            assert recorded == FEEDBACKS
            # Replaying the event log in id order gives exactly the stored ratings: no update was lost or reordered.
            replay = client.post(f"{urls[1]}/api/v1/recompute", json={"backend": "elo"}).json()
            assert replay["events"] == FEEDBACKS
            for row in replay["leaderboard"]:
                assert row["rating"] == pytest.approx(board[row["name"]]["rating"], abs=1e-6)
        print(f"{FEEDBACKS + RETRIED} feedbacks over 2 replicas in {elapsed:.1f} s")
    finally:
        for process in spawned:
            stop_process(process)


def test_connections_the_server_dropped_are_replaced_without_an_error(pg_url: str) -> None:
    """No pre-ping round trip: a pooled connection the server closed fails its first statement, and the read
    or write is retried on a new one (before any change, so nothing is applied twice)."""
    import sqlalchemy as sa

    from assay.serve.schemas import FeedbackIn
    from assay.serve.settings import ServeSettings
    from assay.serve.state import ServeState
    from assay.serve.validation import check_feedback

    state = ServeState(ServeSettings(db_url=pg_url, unknown_variants="register"))
    admin = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)
    terminate = sa.text(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    try:
        first = state.record_feedback(check_feedback(FeedbackIn(winner="x", loser="y")))
        state.snapshot()
        with admin.connect() as conn:
            assert conn.execute(terminate).scalar_one() >= 1  # the service's pooled connections
        variants, rows = state.snapshot()
        assert {"x", "y"} <= set(variants)
        assert {r["variant"] for r in rows} >= {"x", "y"}
        asyncio.run(state.snapshot_async())  # the reader thread's kept connection
        with admin.connect() as conn:
            conn.execute(terminate)
        assert "x" in asyncio.run(state.snapshot_async())[0]
        second = state.record_feedback(check_feedback(FeedbackIn(winner="x", loser="y")))
        assert second.event_id == first.event_id + 1
        events = [e for e in state.events() if e["winner"] == "x" and e["loser"] == "y"]
        assert len(events) == 2
    finally:
        state.close()
        admin.dispose()
