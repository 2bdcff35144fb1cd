"""benchmarks/ranking.py --quick: runs in a subprocess, prints three parseable tables, and ranks sensibly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADERS = ("(a) Rank recovery", "(b) Search efficiency", "(c) Gate error rates")


def table(output: str, title: str) -> list[list[str]]:
    """The data rows (split on whitespace) of the table whose title starts with ``title``."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rows = []
    for line in lines[start + 3 :]:  # title, column names, dashes
        if not line.strip():
            break
        rows.append(line.split())
    return rows


def percent(cell: str) -> float | None:
    return None if cell == "n/a" else float(cell.rstrip("%"))


@pytest.fixture(scope="module")
def output() -> str:
    done = subprocess.run(
        [sys.executable, "benchmarks/ranking.py", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_prints_the_three_tables_and_the_command(output: str) -> None:
    for header in HEADERS:
        assert header in output
    assert "command: python benchmarks/ranking.py --quick" in output


def test_rank_recovery_numbers_parse_and_bt_ranks_well_with_a_good_judge(output: str) -> None:
    rows = table(output, HEADERS[0])
    assert len(rows) == 4  # quick: p 0.9, K 3 and 10, two opponent rules
    for row in rows:
        assert row[2] in ("top_k", "adaptive")
        values = [float(x) for x in row[3:]]
        assert len(values) == 8  # rho and top-5 recall for BT, Elo, win rate and p-judge
        assert all(-1.0 <= v <= 1.0 for v in values)
    bt_rho = {(row[1], row[2]): float(row[3]) for row in rows if row[0] == "0.9"}
    assert bt_rho["10", "adaptive"] > 0.7
    assert bt_rho["10", "top_k"] > 0.5
    judge_rho = {(row[1], row[2]): float(row[9]) for row in rows if row[0] == "0.9"}
    assert judge_rho["10", "adaptive"] > 0.9
    assert judge_rho["10", "adaptive"] > judge_rho["10", "top_k"]


def test_search_and_gate_numbers_parse_and_the_ratchet_beats_keep_if_better(output: str) -> None:
    for row in table(output, HEADERS[1]):
        assert row[1] in ("greedy", "ranked", "dgm")
        assert row[2].startswith(">") or float(row[2]) >= 1
        assert 0.0 <= percent(row[3]) <= 100.0
        assert 0.0 <= float(row[4]) <= 1.0
    gates = {row[0]: [percent(cell) for cell in row[1:]] for row in table(output, HEADERS[2])}
    assert set(gates) == {"ratchet", "backpressure", "trend", "keep-if-better"}
    for shares in gates.values():
        assert len(shares) == 3
        assert all(s is None or 0.0 <= s <= 100.0 for s in shares)
    ratchet_null, naive_null = gates["ratchet"][0], gates["keep-if-better"][0]
    assert ratchet_null is not None and naive_null is not None
    assert ratchet_null < 15.0 < naive_null
