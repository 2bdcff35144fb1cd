"""Load on `assay serve` against a bare FastAPI endpoint in the same run, on SQLite and on PostgreSQL.

For each backend it starts, each in its own process on 127.0.0.1 (same uvicorn settings, access log off):
  * sqlite:   one `assay serve` on a fresh SQLite file, and one bare FastAPI app;
  * postgres: two `assay serve` replicas on one fresh PostgreSQL database (a throwaway server from initdb and
    pg_ctl on loopback, or --pg-url), and two bare apps; the load alternates between the two of each kind.
The bare app has one sync POST endpoint taking a small pydantic body and returning a dict: the cost of HTTP,
FastAPI and uvicorn with no database. Five variants are registered.

Each round runs every scenario once, in turn — bare, feedback (random pairwise feedback), select (3 random
candidates) — and --rounds rounds are interleaved so a burst of load from elsewhere on the machine falls on
all of them. The load generator is its own process (httpx.AsyncClient, --concurrency requests in flight), so
it does not share an interpreter with what it measures. Reported: medians over the rounds of req/s, p50 and
p99, of each round's ratio to the bare endpoint of the same round, and of the CPU time the server processes
spent per request (user + system, from /proc; PostgreSQL's own processes not included) — the one figure other
work on a shared machine hardly moves; then the spread (min / median / max over the rounds) of each ratio of
req/s to the bare endpoint. It prints the machine (CPU model, cores, kernel, Python) and the PostgreSQL server's
version beside them.

After every feedback round it checks the service's state: events in the log = feedbacks acknowledged, wins =
losses = pairwise events, the Elo sum = 1500 per variant, and an Elo replay of the event log = the stored
ratings (to 1e-9). A mismatch or any non-200 answer makes the exit code 1.

Run: python benchmarks/serve_load.py [--requests 2000] [--concurrency 16] [--rounds 3]
                                     [--backends sqlite,postgres] [--pg-url postgresql+psycopg://...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
from machine import describe
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.pg (the throwaway PostgreSQL server the tests use)

TOKEN = "bench-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
VARIANTS = [f"v{i}" for i in range(5)]
START = 1500.0
SCENARIOS = ("bare", "feedback", "select")
LISTENING = re.compile(r"listening on (http://\S+)")
WARM_UP = 20


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
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=75)
    uvicorn.Server(config).run(sockets=[sock])


# --- the load generator (run as its own process) ---------------------------------------------------------


def _job(scenario: str, rng: random.Random) -> tuple[str, dict[str, Any]]:
    if scenario == "select":
        return "/api/v1/select", {"candidates": rng.sample(VARIANTS, 3)}
    winner, loser = rng.sample(VARIANTS, 2)
    path = "/bare" if scenario == "bare" else "/api/v1/feedback"
    return path, {"winner": winner, "loser": loser}


async def _generate(spec: dict[str, Any]) -> dict[str, Any]:
    urls: list[str] = spec["urls"]
    rng = random.Random(spec["seed"])
    jobs = [(urls[i % len(urls)], *_job(spec["scenario"], rng)) for i in range(spec["requests"] + WARM_UP)]
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    limits = httpx.Limits(max_connections=spec["concurrency"], max_keepalive_connections=spec["concurrency"])
    async with httpx.AsyncClient(headers=AUTH, limits=limits, timeout=60) as client:
        for url, path, body in jobs[:WARM_UP]:  # opens connections and warms caches; not timed
            response = await client.post(url + path, json=body)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        queue = list(reversed(jobs[WARM_UP:]))
        started = time.perf_counter()
        deadline = started + spec["max_seconds"]

        async def worker() -> None:
            while queue and time.perf_counter() < deadline:
                url, path, body = queue.pop()
                t0 = time.perf_counter()
                response = await client.post(url + path, json=body)
                latencies.append(time.perf_counter() - t0)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

        await asyncio.gather(*(worker() for _ in range(spec["concurrency"])))
        elapsed = time.perf_counter() - started
    return {"latencies": latencies, "elapsed": elapsed, "statuses": statuses}


def run_generator(spec: dict[str, Any]) -> dict[str, Any]:
    """One scenario's load from a separate Python process; its timings and status counts."""
    command = [sys.executable, __file__, "--load-generator", json.dumps(spec)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=spec["max_seconds"] + 300)
    if done.returncode != 0:
        raise SystemExit(f"the load generator failed: {done.stderr.strip()[-800:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    result["statuses"] = {int(k): v for k, v in result["statuses"].items()}
    return result


# --- servers ----------------------------------------------------------------------------------------------


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


@contextmanager
def servers(db: str, replicas: int, workdir: str) -> Iterator[dict[str, tuple[list[str], list[int]]]]:
    """``replicas`` `assay serve` processes on ``db`` and as many bare apps: kind -> (URLs, process ids)."""
    env = {**os.environ, "ASSAY_SERVE_TOKEN": TOKEN}
    started: list[subprocess.Popen[str]] = []
    kinds: dict[str, tuple[list[str], list[int]]] = {"serve": ([], []), "bare": ([], [])}
    commands = {
        "serve": [sys.executable, "-m", "assay", "serve", "--port", "0", "--db", db],
        "bare": [sys.executable, __file__, "--bare-server", "0"],
    }
    try:
        for _ in range(replicas):
            for kind, command in commands.items():
                process, url = _start(command, env, workdir)
                started.append(process)
                kinds[kind][0].append(url)
                kinds[kind][1].append(process.pid)
        yield kinds
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()


@contextmanager
def postgres_database(given: str | None) -> Iterator[str]:
    """A fresh database: on the server at ``given`` (a base URL), or on a throwaway local server."""
    from tests.pg import create_database, pg_bin, running_postgres

    if given:
        yield create_database(given.rstrip("/"))
        return
    if pg_bin() is None:
        raise SystemExit("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")
    with running_postgres(max_connections=200) as base:
        yield create_database(base)


def postgres_version(url: str) -> str:
    """The server's version line (``PostgreSQL 15.14 (Debian 15.14-0+deb12u1)``)."""
    import psycopg

    with psycopg.connect(url.replace("+psycopg", "", 1)) as conn:
        row = conn.execute("SELECT version()").fetchone()
    text = str(row[0]) if row else "unknown"
    return text.split(" on ", 1)[0]


# --- checking the state -----------------------------------------------------------------------------------


def check_state(url: str, acknowledged: int) -> tuple[bool, str]:
    """Whether the log, the counts, the Elo sum and a replay agree; a one-line account."""
    with httpx.Client(base_url=url, timeout=120) as client:
        ratings = client.get("/api/v1/ratings").json()
        replay = client.post("/api/v1/recompute", json={"backend": "elo"}).json()
        metrics = client.get("/metrics").text
    kinds = {
        m.group(1): float(m.group(2))
        for m in re.finditer(r'^assay_serve_feedback_total\{kind="(\w+)"\} (\S+)$', metrics, re.M)
    }
    wins = sum(r["wins"] for r in ratings)
    losses = sum(r["losses"] for r in ratings)
    total = sum(r["rating"] for r in ratings)
    stored = {r["name"]: r["rating"] for r in ratings}
    gap = max(abs(row["rating"] - stored[row["name"]]) for row in replay["leaderboard"])
    problems = []
    if replay["events"] != acknowledged or sum(kinds.values()) != acknowledged:
        problems.append(f"{replay['events']} events logged, {acknowledged} acknowledged")
    if not wins == losses == kinds.get("pairwise", -1) == acknowledged:
        problems.append(f"wins {wins}, losses {losses}, pairwise events {kinds.get('pairwise')}")
    if abs(total - START * len(VARIANTS)) > 1e-6:
        problems.append(f"Elo sum {total!r}")
    if gap > 1e-9:
        problems.append(f"replay differs from the stored ratings by {gap:.3g}")
    account = (
        f"{acknowledged} feedbacks acknowledged = {replay['events']} events; wins = losses = {wins}; "
        f"Elo sum {total:.6f}; replay - stored <= {gap:.1e}"
    )
    return not problems, account if not problems else "MISMATCH: " + "; ".join(problems)


# --- the run ----------------------------------------------------------------------------------------------


def cpu_seconds(pids: list[int]) -> float:
    """User plus system CPU time the processes have used so far (Linux /proc; 0.0 elsewhere)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def measure(backend: str, db: str, replicas: int, args: argparse.Namespace, workdir: str) -> dict[str, Any]:
    """Interleaved rounds of every scenario on one backend; per-round figures and the state checks."""
    rounds: list[dict[str, dict[str, float]]] = []
    checks: list[tuple[bool, str]] = []
    errors = 0
    acknowledged = 0
    with servers(db, replicas, workdir) as kinds:
        serve_urls = kinds["serve"][0]
        with httpx.Client(headers=AUTH, timeout=30) as client:
            for name in VARIANTS:
                client.put(f"{serve_urls[0]}/api/v1/variants/{name}", json={}).raise_for_status()
        for number in range(args.rounds):
            figures = {}
            for scenario in SCENARIOS:
                urls, pids = kinds["bare" if scenario == "bare" else "serve"]
                spec = {
                    "urls": urls,
                    "scenario": scenario,
                    "requests": args.requests,
                    "concurrency": args.concurrency,
                    "max_seconds": args.max_seconds,
                    "seed": number * 10 + SCENARIOS.index(scenario),
                }
                cpu_before = cpu_seconds(pids)
                result = run_generator(spec)
                cpu = cpu_seconds(pids) - cpu_before
                ok = result["statuses"].get(200, 0)
                errors += sum(result["statuses"].values()) - ok
                if scenario == "feedback":
                    acknowledged += ok
                latencies = result["latencies"]
                figures[scenario] = {
                    "rps": len(latencies) / result["elapsed"],
                    "p50": _percentile(latencies, 50),
                    "p99": _percentile(latencies, 99),
                    "cpu": cpu / max(1, sum(result["statuses"].values())),
                }
                if scenario == "feedback":
                    checks.append(check_state(serve_urls[number % len(serve_urls)], acknowledged))
            rounds.append(figures)
    return {"backend": backend, "replicas": replicas, "rounds": rounds, "checks": checks, "errors": errors}


def _median(values: list[float]) -> float:
    return statistics.median(values)


def spread(result: dict[str, Any]) -> list[str]:
    """Per scenario, the min / median / max over the rounds of the req/s ratio to the bare endpoint."""
    lines = []
    for scenario in SCENARIOS[1:]:
        ratios = sorted(r[scenario]["rps"] / r["bare"]["rps"] for r in result["rounds"])
        lines.append(
            f"spread {result['backend']:<9} {scenario:<9} x bare req/s min {ratios[0]:.2f} "
            f"median {_median(ratios):.2f} max {ratios[-1]:.2f} over {len(ratios)} rounds"
        )
    return lines


def report(result: dict[str, Any], print_rounds: bool) -> list[str]:
    """The table rows of one backend: medians of the figures and of the per-round ratios."""
    lines = []
    rounds = result["rounds"]
    for scenario in SCENARIOS:
        rps = _median([r[scenario]["rps"] for r in rounds])
        p50 = _median([r[scenario]["p50"] for r in rounds])
        p99 = _median([r[scenario]["p99"] for r in rounds])
        x_rps = _median([r[scenario]["rps"] / r["bare"]["rps"] for r in rounds])
        x_p50 = _median([r[scenario]["p50"] / r["bare"]["p50"] for r in rounds])
        x_p99 = _median([r[scenario]["p99"] / r["bare"]["p99"] for r in rounds])
        cpu = _median([r[scenario]["cpu"] for r in rounds])
        lines.append(
            f"{result['backend']:<9} {result['replicas']:>2} {scenario:<9} {rps:>8.0f} {p50 * 1e3:>8.2f} "
            f"{p99 * 1e3:>8.2f} {x_rps:>12.2f} {x_p50:>10.2f} {x_p99:>10.2f} {cpu * 1e3:>8.2f}"
        )
        if print_rounds:
            each = ", ".join(
                f"{r[scenario]['rps']:.0f} req/s p99 {r[scenario]['p99'] * 1e3:.1f} ms "
                f"({r[scenario]['rps'] / r['bare']['rps']:.2f}x)"
                for r in rounds
            )
            lines.append(f"{'':<13}rounds: {each}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="per scenario and round")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backends", default="sqlite,postgres", help="comma-separated: sqlite, postgres")
    parser.add_argument(
        "--pg-url", default=None, help="a PostgreSQL server's base URL (default: a local one)"
    )
    parser.add_argument("--max-seconds", type=float, default=120.0, help="per scenario and round")
    parser.add_argument("--quick", action="store_true", help="300 requests, concurrency 8")
    parser.add_argument("--verbose", action="store_true", help="also print every round's figures")
    parser.add_argument("--bare-server", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--load-generator", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.bare_server is not None:
        bare_server(args.bare_server)
        return 0
    if args.load_generator is not None:
        print(json.dumps(asyncio.run(_generate(json.loads(args.load_generator)))))
        return 0
    if args.quick:
        args.requests, args.concurrency = 300, 8
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = sorted(set(backends) - {"sqlite", "postgres"})
    if unknown:
        parser.error(f"unknown backend(s) {unknown}; known: sqlite, postgres")
    workdir = tempfile.mkdtemp(prefix="assay-serve-bench-")
    load_before = os.getloadavg()
    results = []
    versions = []
    for backend in backends:
        with ExitStack() as stack:
            if backend == "sqlite":
                db, replicas = f"sqlite:///{Path(workdir) / 'serve.db'}", 1
                versions.append(f"SQLite {sqlite3.sqlite_version}")
            else:
                db, replicas = stack.enter_context(postgres_database(args.pg_url)), 2
                versions.append(postgres_version(db))
            results.append(measure(backend, db, replicas, args, workdir))
    load_after = os.getloadavg()
    print(
        f"assay serve load: {args.requests} requests per scenario and round, {args.rounds} rounds interleaved, "
        f"concurrency {args.concurrency}, load generator in its own process; {os.cpu_count()} CPUs, "
        f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after"
    )
    print(
        f"{'backend':<9} {'n':>2} {'scenario':<9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'x bare req/s':>12} {'x bare p50':>10} {'x bare p99':>10} {'CPU ms':>8}   (medians over rounds)"
    )
    for result in results:
        for line in report(result, args.verbose):
            print(line)
    for result in results:
        for line in spread(result):
            print(line)
    print(f"machine: {describe()}")
    for version in versions:
        print(f"database: {version}")
    failed = False
    for result in results:
        for number, (ok, account) in enumerate(result["checks"], start=1):
            print(f"check {result['backend']} round {number}: {account}")
            failed |= not ok
        if result["errors"]:
            print(f"{result['backend']}: {result['errors']} answer(s) other than 200")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
