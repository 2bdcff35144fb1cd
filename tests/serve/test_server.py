"""``assay serve`` as a user runs it: real subprocesses, the line saying where it listens, ratings that survive
a restart, a run's kept candidates as variants, and one-line errors for a bad start."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from assay.errors import AssayError
from assay.serve.server import serve
from assay.serve.settings import ServeSettings
from tests.extras import need
from tests.serve.conftest import AUTH, serve_env, start_serve

need("serve")


def _write_run(folder: Path) -> None:
    folder.mkdir(parents=True)
    rows = [
        ("cand-0000", "a" * 40, "baseline", 0, 0.0),
        ("cand-0001", "b" * 40, "keep", 2_000_000, 0.5),
        ("cand-0002", "c" * 40, "discard", 1_000, 0.1),
        ("cand-0003", "d" * 40, "keep", 0, 0.0),
    ]
    lines = []
    for generation, (cid, commit, decision, tokens, cost) in enumerate(rows):
        record = {
            "run_id": folder.name,
            "generation": generation,
            "candidate_id": cid,
            "commit": commit,
            "layer": 1,
            "proposer": "mutate",
            "description": f"change {generation}",
            "decision": decision,
            "tokens": tokens,
            "cost_usd": cost,
        }
        lines.append(json.dumps(record))
    (folder / "experiments.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.e2e
def test_ratings_and_run_variants_survive_a_restart(tmp_path: Path) -> None:
    _write_run(tmp_path / ".assay" / "runs" / "run-1")
    db = f"sqlite:///{tmp_path / 'state' / 'serve.db'}"
    first = start_serve(["--db", db, "--from-run", "run-1"], tmp_path)
    try:
        assert first.url.startswith("http://127.0.0.1:")
        assert "2 variant(s) from the run" in first.lines[-1]
        with httpx.Client(base_url=first.url, headers=AUTH, timeout=30) as client:
            variants = {v["name"]: v for v in client.get("/api/v1/variants").json()}
            assert sorted(variants) == ["cand-0001@bbbbbbb", "cand-0003@ddddddd"]
            assert variants["cand-0001@bbbbbbb"]["cost_per_1m_tokens"] == 0.25
            assert variants["cand-0001@bbbbbbb"]["description"] == "change 1"
            body = {"winner": "cand-0003@ddddddd", "loser": "cand-0001@bbbbbbb", "category": "math"}
            assert client.post("/api/v1/feedback", json=body).status_code == 200
            before = client.get("/api/v1/ratings", params={"category": "math"}).json()
            assert client.get("/docs").status_code == 200
            assert "/api/v1/feedback" in client.get("/openapi.json").json()["paths"]
    finally:
        first.stop()
    assert first.process.stderr is not None and "Traceback" not in first.process.stderr.read()
    second = start_serve(["--db", db, "--from-run", str(tmp_path / ".assay" / "runs" / "run-1")], tmp_path)
    try:
        with httpx.Client(base_url=second.url, timeout=30) as client:
            assert client.get("/api/v1/ratings", params={"category": "math"}).json() == before
            assert before[1]["rating"] == 1516.0 and before[1]["wins"] == 1
    finally:
        second.stop()


@pytest.mark.e2e
def test_a_bad_start_is_one_line_without_traceback(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"this is not a database \x00\xff" * 300)
    locked = tmp_path / "locked.db"
    holder = sqlite3.connect(locked, isolation_level=None)
    holder.execute("CREATE TABLE held (x)")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO held VALUES (1)")
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = str(busy.getsockname()[1])
    cases = [
        (["--db", "no such url"], "not a database URL"),
        (["--db", f"sqlite:///{corrupt}"], "file is not a database"),
        (["--db", f"sqlite:///{locked}", "--busy-timeout", "0.2"], "locked"),
        (["--db", f"sqlite:///{tmp_path / 'ok.db'}", "--port", port], "port is in use"),
    ]
    try:
        processes = [
            subprocess.Popen(
                [sys.executable, "-m", "assay", "serve", *args],
                cwd=tmp_path,
                env=serve_env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for args, _ in cases
        ]
        for process, (args, words) in zip(processes, cases, strict=True):
            out, err = process.communicate(timeout=120)
            assert process.returncode == 2, (args, out, err)
            assert words in err and "Traceback" not in err, (args, err)
            assert len(err.strip().splitlines()) == 1, (args, err)
            assert "listening" not in out
    finally:
        holder.close()
        busy.close()
    assert corrupt.read_bytes().startswith(b"this is not a database")


def test_serving_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    with pytest.raises(AssayError, match="ASSAY_SERVE_TOKEN"):
        serve(ServeSettings(db_url=f"sqlite:///{tmp_path / 'x.db'}"), host="0.0.0.0", port=0)
    assert not (tmp_path / "x.db").exists()


@pytest.mark.e2e
def test_accepted_connections_send_without_waiting_for_an_ack() -> None:
    """The listening socket says it is TCP, so asyncio turns Nagle's algorithm off on every connection it
    accepts: a response written in two parts (head, then body) is not held back waiting for the client's
    delayed ACK of the first (up to 40 ms a request)."""
    import asyncio

    from assay.serve.server import bind

    async def accepted_nodelay() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        sock = bind("127.0.0.1", 0)
        server = await asyncio.start_server(handle, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname())
            value = await asyncio.wait_for(seen, 10)
            writer.close()
        return value

    assert asyncio.run(accepted_nodelay()) == 1
