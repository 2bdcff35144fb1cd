"""``assay rate`` end to end: the real command in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CSV = """a,b,winner,category,weight
gpt,claude,claude,code,1
claude,llama,claude,code,1
gpt,llama,gpt,prose,2
llama,gpt,tie,prose,
claude,gpt,,code,
claude,llama,claude,prose,1
"""


def assay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )


@pytest.fixture
def results(tmp_path: Path) -> Path:
    path = tmp_path / "results.csv"
    path.write_text(CSV)
    return path


def test_table_for_every_backend(results):
    for backend in ("elo", "glicko2", "bradley_terry", "weng_lin"):
        run = assay("rate", str(results), "--backend", backend, cwd=results.parent)
        assert run.returncode == 0, run.stderr
        lines = run.stdout.splitlines()
        for column in ("rank", "name", "rating", "±", "W/L/T", "comparisons", "confidence"):
            assert column in run.stdout
        assert f"{backend} ratings, 6 outcomes" in run.stdout
        claude = next(line for line in lines if "claude" in line)
        assert "3/0/1" in claude and " 1 " in claude  # claude is first: 3 wins, 1 tie


def test_json_with_category(results):
    run = assay(
        "rate", str(results), "--json", "--category", "code", "--backend", "bradley_terry", cwd=results.parent
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert (report["backend"], report["category"], report["outcomes"]) == ("bradley_terry", "code", 3)
    board = report["leaderboard"]
    assert [row["name"] for row in board] == ["claude", "gpt", "llama"]
    assert [row["rank"] for row in board] == [1, 2, 3]
    assert board[0] | {"rating": 0, "uncertainty": 0, "confidence": 0} == {
        "rank": 1, "name": "claude", "rating": 0, "uncertainty": 0,
        "wins": 2, "losses": 0, "ties": 1, "comparisons": 3, "confidence": 0,
    }  # fmt: skip
    assert board[0]["rating"] > 1500 > board[2]["rating"]


def test_jsonl_input(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": "x", "b": "y", "winner": "x"}\n{"a": "x", "b": "y", "winner": "tie"}\n')
    run = assay("rate", str(path), "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    board = json.loads(run.stdout)["leaderboard"]
    assert [(r["name"], r["wins"], r["ties"]) for r in board] == [("x", 1, 1), ("y", 0, 1)]
    assert board[0]["rating"] == pytest.approx(1500 + 16 + 32 * (0.5 - 1 / (1 + 10 ** (-32 / 400))))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--backend", "trueskill"],
            "unknown rating backend 'trueskill'; known: bradley_terry, elo, glicko2, weng_lin",
        ),
        (["--category", "poetry"], "no outcomes in category 'poetry'; known: code, prose"),
    ],
)
def test_bad_options_are_one_line_errors(results, args, message):
    run = assay("rate", str(results), *args, cwd=results.parent)
    assert run.returncode == 2
    assert message in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_malformed_row_names_file_and_line(results):
    results.write_text(CSV + "gpt,claude,mistral,code,1\n")
    run = assay("rate", str(results), cwd=results.parent)
    assert run.returncode == 2
    assert "results.csv: line 8: winner 'mistral' is neither a ('gpt') nor b ('claude')" in run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_the_help_lists_every_registered_backend() -> None:
    from assay.cli.rate import BACKENDS
    from assay.ratings import RATINGS

    assert list(BACKENDS) == RATINGS.names()
