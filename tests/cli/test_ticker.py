"""Progress lines for a pipe: a line every few seconds, with cases done, elapsed time and an estimate."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from assay.cli.ticker import CaseCounter, Ticker, duration, every_s
from tests.cli.conftest import assay


def test_the_counter_says_done_failed_elapsed_and_what_is_left() -> None:
    now = [100.0]
    counter = CaseCounter("eval", 10, clock=lambda: now[0])
    assert counter.line() == "eval: 0/10 cases, 0s elapsed"
    for failed in (False, True, False, False):
        counter.add(failed)
    now[0] += 40.0
    assert counter.line() == "eval: 4/10 cases, 1 failed, 40s elapsed, about 1m00s left"
    assert duration(3725) == "1h02m" and duration(59.6) == "1m00s"


def test_the_ticker_writes_from_its_own_thread_until_the_block_ends() -> None:
    lines: list[str] = []
    wrote = threading.Event()

    def write(line: str) -> None:
        lines.append(line)
        if len(lines) >= 3:
            wrote.set()

    with Ticker(lambda: f"tick {len(lines)}", write, every=0.01):
        assert wrote.wait(5)  # the block itself does nothing: the lines come anyway
    count = len(lines)
    assert lines[:3] == ["tick 0", "tick 1", "tick 2"]
    threading.Event().wait(0.05)
    assert len(lines) == count  # stopped with the block


@pytest.mark.parametrize(("value", "expected"), [("2.5", 2.5), ("", 5.0), ("-1", 5.0), ("soon", 5.0)])
def test_the_interval_reads_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: float
) -> None:
    monkeypatch.setenv("ASSAY_PROGRESS_S", value)
    assert every_s() == expected


@pytest.mark.e2e
def test_eval_into_a_pipe_prints_progress_lines_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text("import sys, time\ntime.sleep(0.3)\nprint(sys.argv[1])\n")
    (tmp_path / "cases.yaml").write_text(
        "cases:\n" + "".join(f"  - {{id: c{i}, input: w{i}, checks: [{{equals: w{i}}}]}}\n" for i in range(8))
    )
    (tmp_path / "assay.yaml").write_text(
        "artifact: {paths: [slow.py]}\ncases: {files: [cases.yaml]}\n"
        "runner: {type: command, command: 'python3 slow.py {input}'}\nconcurrency: 1\n"
    )
    done = assay("eval", "--no-cache", cwd=tmp_path, env={"ASSAY_PROGRESS_S": "0.5"})
    assert done.returncode == 0, done.stderr
    ticks = [line for line in done.stderr.splitlines() if line.startswith("eval: ")]
    assert len(ticks) >= 2, done.stderr
    assert all(" cases, " in line and " elapsed" in line for line in ticks)
    assert "eval: " not in done.stdout  # the table and --json stay clean
    quiet = assay("eval", "--no-cache", "-q", cwd=tmp_path, env={"ASSAY_PROGRESS_S": "0.5"})
    assert "eval: " not in quiet.stderr
