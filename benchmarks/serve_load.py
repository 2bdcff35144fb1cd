"""Load on `assay serve` from a loopback generator, against a bare FastAPI endpoint measured in the same run.

Starts two servers on 127.0.0.1 (each its own process, same uvicorn settings, access log off):
  * `assay serve` on a fresh SQLite file (or --db URL) with five variants registered;
  * a bare FastAPI app with one sync POST endpoint taking a small pydantic body and returning a dict.
Then, for each scenario, sends --requests requests with --concurrency in flight (httpx.AsyncClient, one
process) and reports throughput, p50 and p99 latency, and the ratio of each to the bare endpoint's.
Scenarios: bare (the baseline), feedback (random pairwise feedback), select (3 random candidates).
The load is bounded in count and time (--max-seconds per scenario) and only targets 127.0.0.1.

Run: python benchmarks/serve_load.py [--requests 2000] [--concurrency 16] [--db URL] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel

TOKEN = "bench-token"
VARIANTS = [f"v{i}" for i in range(5)]
LISTENING = re.compile(r"listening on (http://\S+)")


class Body(BaseModel):
    """The bare endpoint's body: the shape of a pairwise feedback."""

    winner: str | None = None
    loser: str | None = None


def bare_server(port: int) -> None:
    """The baseline: FastAPI + uvicorn, one sync endpoint, no database."""
    import uvicorn
    from fastapi import FastAPI

    from assay.serve.server import bind

    app = FastAPI()

    @app.post("/bare")
    def bare(body: Body) -> dict[str, Any]:
        return {"winner": body.winner, "loser": body.loser, "ok": True}

    sock = bind("127.0.0.1", port)
    print(f"bare listening on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")).run(
        sockets=[sock]
    )


def _start(command: list[str], env: dict[str, str], cwd: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        found = LISTENING.search(line)
        if found:
            return process, found.group(1)
        if not line:
            break
    process.kill()
    raise SystemExit(f"server did not start: {' '.join(command)}: {process.communicate()[1].strip()[-500:]}")


async def _load(
    url: str,
    make: Callable[[random.Random], tuple[str, dict[str, Any]]],
    requests: int,
    concurrency: int,
    limit: float,
) -> tuple[list[float], float, int]:
    rng = random.Random(0)
    jobs = [make(rng) for _ in range(requests)]
    latencies: list[float] = []
    errors = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=30) as client:
        for path, body in jobs[: min(20, requests)]:  # warm-up, not measured
            await client.post(path, json=body)
        started = time.perf_counter()
        deadline = started + limit
        queue = list(reversed(jobs))

        async def worker() -> None:
            nonlocal errors
            while queue and time.perf_counter() < deadline:
                path, body = queue.pop()
                t0 = time.perf_counter()
                response = await client.post(path, json=body)
                latencies.append(time.perf_counter() - t0)
                errors += response.status_code != 200

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return latencies, elapsed, errors


def _feedback(rng: random.Random) -> tuple[str, dict[str, Any]]:
    winner, loser = rng.sample(VARIANTS, 2)
    return "/api/v1/feedback", {"winner": winner, "loser": loser}


def _select(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "/api/v1/select", {"candidates": rng.sample(VARIANTS, 3)}


def _bare(rng: random.Random) -> tuple[str, dict[str, Any]]:
    winner, loser = rng.sample(VARIANTS, 2)
    return "/bare", {"winner": winner, "loser": loser}


def _percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--db", default=None, help="SQLAlchemy URL (default: a fresh SQLite file)")
    parser.add_argument("--max-seconds", type=float, default=120.0, help="per scenario")
    parser.add_argument("--quick", action="store_true", help="200 requests, concurrency 8")
    parser.add_argument("--bare-server", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.bare_server is not None:
        bare_server(args.bare_server)
        return 0
    if args.quick:
        args.requests, args.concurrency = 200, 8
    workdir = tempfile.mkdtemp(prefix="assay-serve-bench-")
    db = args.db or f"sqlite:///{Path(workdir) / 'serve.db'}"
    env = {**os.environ, "ASSAY_SERVE_TOKEN": TOKEN}
    servers = []
    try:
        serve, serve_url = _start(
            [sys.executable, "-m", "assay", "serve", "--port", "0", "--db", db], env, workdir
        )
        servers.append(serve)
        bare, bare_url = _start([sys.executable, __file__, "--bare-server", "0"], env, workdir)
        servers.append(bare)
        with httpx.Client(base_url=serve_url, headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            for name in VARIANTS:
                client.put(f"/api/v1/variants/{name}", json={"cost_per_1m_tokens": 1.0}).raise_for_status()
        scenarios = [
            ("bare", bare_url, _bare),
            ("feedback", serve_url, _feedback),
            ("select", serve_url, _select),
        ]
        results = {}
        for name, url, make in scenarios:
            latencies, elapsed, errors = asyncio.run(
                _load(url, make, args.requests, args.concurrency, args.max_seconds)
            )
            results[name] = (
                len(latencies) / elapsed,
                _percentile(latencies, 50),
                _percentile(latencies, 99),
                errors,
            )
    finally:
        for process in servers:
            process.terminate()
            process.wait(15)
    base_rps, base_p50, base_p99, _ = results["bare"]
    print(
        f"assay serve load: {args.requests} requests per scenario, concurrency {args.concurrency}, db {db.split('://')[0]}"
    )
    print(
        f"{'scenario':<10} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6} {'x bare req/s':>13} {'x bare p50':>11} {'x bare p99':>11}"
    )
    for name, (rps, p50, p99, errors) in results.items():
        print(
            f"{name:<10} {rps:>8.0f} {p50 * 1e3:>8.2f} {p99 * 1e3:>8.2f} {errors:>6} "
            f"{rps / base_rps:>13.2f} {p50 / base_p50:>11.2f} {p99 / base_p99:>11.2f}"
        )
    return 1 if any(r[3] for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
