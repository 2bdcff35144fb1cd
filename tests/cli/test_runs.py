"""``assay status`` and ``assay log`` tell the truth: the best candidate's holdout as the evolve summary gave
it, each figure labelled, a run whose process is gone as interrupted, and the reason for every decision
(``assay log --json`` too, for a run recorded before reasons were kept as well); ``assay adopt`` refuses a best
with a caveat unless forced."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay.cli import runs
from assay.cli.console import LazyConsole
from assay.cli.runs import STATUS_COLUMNS, adopt_command, status_command
from assay.config import load_config
from assay.errors import AssayError
from assay.history.records import CandidateRecord, RunRecord
from assay.history.store import RunStore
from assay.loop.flags import Flag
from assay.model import Dimension, OverfitVerdict
from tests.loop.test_summary import record

from .conftest import assay, git

OLD_RUNS = Path(__file__).parents[1] / "loop" / "data" / "run-v1"  # written before reasons were kept
OLD_RUN = "20261201-005652-58d8"


def rows(table: str) -> list[list[str]]:
    """The body rows of a rich table, one list of stripped cells per row."""
    return [[cell.strip() for cell in line.split("│")[1:-1]] for line in table.splitlines() if "│" in line]


def status_row(project: Path) -> dict[str, str]:
    status = assay("status", cwd=project)
    assert status.returncode == 0, status.stderr
    (row,) = rows(status.stdout)
    return dict(zip(STATUS_COLUMNS, row, strict=True))


def stored_run(project: Path, records: list[CandidateRecord], **run: object) -> RunStore:
    """A finished run with ``records`` in the project's run store, as a run would leave it."""
    config = load_config(project / "assay.yaml")
    store = RunStore(f"sqlite:///{config.ensure_data_path() / 'assay.db'}")
    fields: dict[str, object] = {
        "run_id": "r",
        "branch": "assay/r",
        "base_commit": "0" * 40,
        "status": "finished",
    }
    store.create_run(RunRecord.model_validate({**fields, **run}))
    for rec in records:
        store.add_candidate(rec)
    return store


OVERFIT = [
    record(0, holdout_score=0.9600),
    record(4, dev_score=0.96, holdout_score=0.9677),
    record(7, dev_score=0.974, dev_pass_rate=0.7143, holdout_score=0.9652, flags=[Flag.OVERFITTING]),
]


def test_status_labels_each_figure_and_the_caveat(project, capsys):
    stored_run(project, OVERFIT, stop_reason="reached 7 generations")
    status_command(config=project / "assay.yaml")
    out = capsys.readouterr().out
    (row,) = rows(out)
    assert dict(zip(STATUS_COLUMNS, row, strict=True)) == {
        "run": "r",
        "status": "finished",
        "generations": "7",
        "baseline dev score": "0.8000",
        "best dev score": "0.9740",
        "holdout of best": "0.9652",
        "stop reason": "reached 7 generations",
    }
    lines = [line for line in out.splitlines() if line.startswith("r ")]
    assert lines[:2] == [
        "r best (chosen by the gate on dev cases): gen 7 cand-0007, dev score 0.9740, dev pass rate 0.7143,"
        " holdout score 0.9652 (of this candidate)",
        "r highest holdout measured: 0.9677 (gen 4 cand-0004)",
    ]
    assert lines[2].startswith("r caveat: cand-0007 was flagged overfitting")


def test_status_and_adopt_take_the_best_the_run_named(project, capsys):
    # `final_pick: rating` named cand-0004 at the end, not the last kept.
    stored_run(project, OVERFIT, best=OVERFIT[1].commit)
    status_command(config=project / "assay.yaml")
    assert "r best (chosen by the gate on dev cases): gen 4 cand-0004" in capsys.readouterr().out


def test_adopt_refuses_a_candidate_with_a_caveat_in_one_line(project):
    stored_run(project, [record(0, holdout_score=0.97), *OVERFIT[1:]])
    with pytest.raises(AssayError) as refused:
        adopt_command(candidate="best", config=project / "assay.yaml", run_id=None, force=False)
    assert str(refused.value) == (
        "not adopted: cand-0007 was flagged overfitting (its holdout pass rate was more than 0.15 below its dev"
        " pass rate) and has a holdout score 0.9652 below the baseline's 0.9700; pass --force to adopt anyway"
    )
    # A holdout below the baseline's is a caveat on its own, for any candidate named.
    with pytest.raises(AssayError) as named:
        adopt_command(candidate="4", config=project / "assay.yaml", run_id=None, force=False)
    assert str(named.value) == (
        "not adopted: cand-0004 has a holdout score 0.9677 below the baseline's 0.9700; pass --force to adopt anyway"
    )


SHORT_OF_DEV = OverfitVerdict(
    rule="paired",
    flagged=True,
    reason="its gain over the baseline on 10 holdout cases fell short of its gain on 35 dev cases by more than"
    " noise allows: score -0.0100 against +0.0200 (p=0.001)",
    numbers={"dev_cases": 35, "holdout_cases": 10, "level": 0.025},
)


def test_status_adopt_and_log_say_what_the_overfitting_rule_recorded(project, capsys):
    best = record(7, holdout_score=0.97, flags=[Flag.OVERFITTING], overfitting=SHORT_OF_DEV)
    store = stored_run(project, [record(0, holdout_score=0.96), best])
    assert store.candidates("r")[1].overfitting == SHORT_OF_DEV  # the store keeps the verdict whole
    said = f"cand-0007 was flagged overfitting ({SHORT_OF_DEV.reason})"
    status_command(config=project / "assay.yaml")
    assert f"r caveat: {said}; `assay adopt` asks for --force" in capsys.readouterr().out.splitlines()
    with pytest.raises(AssayError) as refused:
        adopt_command(candidate="best", config=project / "assay.yaml", run_id=None, force=False)
    assert str(refused.value) == f"not adopted: {said}; pass --force to adopt anyway"
    runs.log_command(config=project / "assay.yaml", run_id=None, as_json=True)
    entries = json.loads(capsys.readouterr().out)
    assert entries[0]["overfitting"] is None
    assert entries[1]["overfitting"] == SHORT_OF_DEV.model_dump() and entries[1]["flags"] == ["overfitting"]


@pytest.mark.e2e
def test_status_log_diff_and_adopt_show_the_best_the_summary_printed(project):
    assert assay("init", cwd=project).returncode == 0
    evolve = assay("evolve", cwd=project)
    assert evolve.returncode == 0, evolve.stderr
    holdout = re.search(r"holdout score\s+([\d.]+) -> ([\d.]+)", evolve.stdout)
    best = re.search(r"best (cand-\d{4}) \(([0-9a-f]{12})\)", evolve.stdout)
    assert holdout and best, evolve.stdout
    summary_holdout, best_id, best_commit = holdout.group(2), best.group(1), best.group(2)

    row = status_row(project)
    assert row["holdout of best"] == summary_holdout
    assert row["status"] == "finished"

    log = assay("log", cwd=project)
    assert log.returncode == 0, log.stderr
    assert "finished" in log.stdout and "interrupted" not in log.stdout
    (best_row,) = [r for r in rows(log.stdout) if r[1] == best_id]
    assert best_row[6] == summary_holdout  # the holdout column of the best candidate's own row

    # Every generation's reason: in the evolve line, the log's JSON and, for a commit, its git note.
    entries = json.loads(assay("log", "--json", cwd=project).stdout)
    lines = [line for line in evolve.stdout.splitlines() if line.startswith("gen ")]
    assert len(lines) == len(entries) - 1 > 0  # the baseline has no generation line
    for line, entry in zip(lines, entries[1:], strict=True):
        assert entry["reason"] and line.endswith(f" — {entry['reason']}"), (line, entry)
        assert entry["reason"].split(":")[0] in ("keep", "discard", "not evaluated", "retry", "rollback")
        if entry["commit"]:
            assert git(project, "notes", "show", entry["commit"]) == f"reason: {entry['reason']}"
    (best_entry,) = [e for e in entries if e["candidate_id"] == best_id]
    assert best_entry["reason"].startswith("keep: ") and best_entry["commit"].startswith(best_commit)

    base = git(project, "rev-parse", "HEAD")
    diff = assay("diff", "best", cwd=project)
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout == git(project, "diff", base, best_commit) + ("\n" if diff.stdout else "")
    adopt = assay("adopt", "best", cwd=project)
    assert adopt.returncode == 0, adopt.stderr
    assert f"adopted {best_id} ({best_commit}" in adopt.stdout


@pytest.mark.e2e
def test_adopt_of_a_best_with_a_caveat_needs_force(project):
    assert assay("init", cwd=project).returncode == 0
    evolve = assay("evolve", "-n", "4", cwd=project)
    assert evolve.returncode == 0, evolve.stderr
    best_id = re.search(r"best (cand-\d{4}) \(", evolve.stdout)
    assert best_id and best_id.group(1) != "cand-0000", evolve.stdout
    # As L3 would have recorded it: the best's holdout far below its dev pass rate.
    store = RunStore(f"sqlite:///{project / '.assay' / 'assay.db'}")
    (run,) = store.list_runs()
    (best,) = [r for r in store.candidates(run.run_id) if r.candidate_id == best_id.group(1)]
    store.add_candidate(best.model_copy(update={"flags": [*best.flags, Flag.OVERFITTING]}))
    head = git(project, "rev-parse", "HEAD")

    refused = assay("adopt", "best", cwd=project)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip().splitlines() == [
        f"error: not adopted: {best.candidate_id} was flagged overfitting (its holdout pass rate was more than 0.15"
        " below its dev pass rate); pass --force to adopt anyway"
    ]
    assert git(project, "rev-parse", "HEAD") == head
    forced = assay("adopt", "best", "--force", cwd=project)
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.startswith(f"caveat: {best.candidate_id} was flagged overfitting")
    assert forced.stdout.splitlines()[0].endswith("(adopting with --force)")
    assert forced.stdout.splitlines()[-1].startswith(f"adopted {best.candidate_id} (")
    assert forced.stdout.splitlines()[-1].endswith(" into main by fast-forward")
    assert git(project, "rev-parse", "HEAD") == best.commit


LONG_RUN = {"plateau: 20": "plateau: 1000", "discards_per_layer: 8": "discards_per_layer: 100"}
GENERATIONS = 25


def start(project: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "assay", *args, "-n", str(GENERATIONS)],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )


def wait_for_rows(proc: subprocess.Popen[str], results: Path, rows: int) -> None:
    """Wait until results.tsv has ``rows`` lines (the header included) while ``proc`` still runs."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if results.exists() and len(results.read_text().splitlines()) >= rows:
            return
        time.sleep(0.05)
    assert proc.poll() is None, f"the run ended too soon: {proc.communicate()}"
    raise AssertionError(f"{results} did not reach {rows} lines")


@pytest.mark.e2e
def test_a_killed_run_is_interrupted_until_resumed(project):
    config = project / "assay.yaml"
    text = config.read_text()
    for old, new in LONG_RUN.items():
        text = text.replace(old, new)
    config.write_text(text + "  stop_on_oscillation: false\n  target_pass_rate: null\n")
    assert assay("init", cwd=project).returncode == 0
    proc = start(project, "evolve")
    deadline = time.monotonic() + 60
    while not list((project / ".assay" / "runs").glob("*/results.tsv")) and time.monotonic() < deadline:
        time.sleep(0.05)
    (results,) = (project / ".assay" / "runs").glob("*/results.tsv")
    wait_for_rows(proc, results, 3)  # the header, the baseline and a generation

    assert status_row(project)["status"] == "running"
    twice = assay("resume", cwd=project)
    assert twice.returncode == 2 and "is running in another process" in twice.stderr
    assert proc.poll() is None, "the run ended while status ran; it needs to last longer"
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)

    killed = assay("status", cwd=project)
    assert killed.returncode == 0, killed.stderr
    assert "interrupted (continue with `assay resume`)" in killed.stdout
    assert "running" not in killed.stdout
    log = assay("log", cwd=project)
    assert "interrupted (continue with `assay resume`)" in log.stdout

    rows_before = len(results.read_text().splitlines())
    proc = start(project, "resume")
    wait_for_rows(proc, results, rows_before + 1)
    assert status_row(project)["status"] == "running"  # resumed: running again while it runs
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert f"stopped: reached {GENERATIONS} generations" in out
    done = status_row(project)
    assert done["status"] == "finished"
    assert done["generations"] == str(GENERATIONS)
    assert "interrupted" not in assay("log", cwd=project).stdout


def log(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> str:
    """``assay log`` in process: the table (wide, so that no cell folds) or, with ``--json``, the JSON."""
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.setattr(runs, "out", LazyConsole())
    runs.log_command(config=project / "assay.yaml", run_id=None, as_json="--json" in args)
    return capsys.readouterr().out


def test_log_json_gives_every_generation_its_reason(project, capsys, monkeypatch):
    progress = Dimension(
        passed=True,
        numbers={"parent_pass_rate": 0.5, "pass_rate": 0.5, "parent_score": 0.957, "score": 0.973},
    )
    recorded = "discard: regression, weibull-06 PASS→FAIL"
    stored_run(  # only generation 1 has its reason recorded; the others get theirs from what they hold
        project,
        [
            record(0, dev_score=0.957),
            record(1, decision="discard", dev_score=0.974, dev_pass_rate=0.571, reason=recorded),
            record(2, dev_score=0.973, gate={"progress": progress}),
            record(3, decision="invalid", commit=None, description="proposal failed: the model timed out"),
        ],
    ).close()

    entries = json.loads(log(project, capsys, monkeypatch, "--json"))
    assert [e["generation"] for e in entries] == [0, 1, 2, 3]
    assert [e["reason"] for e in entries] == [
        "baseline: dev score 0.957, pass rate 0.500",
        recorded,
        "keep: dev score +0.016 (0.957 → 0.973)",
        "not evaluated: proposal failed: the model timed out",
    ]
    second = entries[1]
    assert (second["run"], second["candidate_id"], second["commit"], second["decision"]) == (
        "r",
        "cand-0001",
        f"{1:040d}",
        "discard",
    )
    assert (second["dev_score"], second["dev_pass_rate"], second["layer"]) == (0.974, 0.571, "surface")
    assert entries[3]["commit"] is None

    table = log(project, capsys, monkeypatch)
    header = next(line for line in table.splitlines() if "┃" in line)
    assert [cell.strip() for cell in header.split("┃")[1:-1]][8] == "reason"
    (row,) = [r for r in rows(table) if r[1] == "cand-0001"]
    assert row[8] == recorded


def test_log_says_each_reason_in_the_numbers_of_its_own_line(project, capsys, monkeypatch):
    # The lines: a tie "on fixable dev cases (score 1.000, pass rate 1.000)" beside a dev pass rate of
    # 0.389; "; also progress" after a regression; a score beside "not evaluated".
    subset_tie = Dimension(
        passed=False,
        numbers={
            "parent_pass_rate": 1.0,
            "pass_rate": 1.0,
            "parent_score": 1.0,
            "score": 1.0,
            "benefit": None,
            "cases": 7,
            "left_out": 11,
        },
    )
    regression = Dimension(passed=False, numbers={"regressed": ["weibull-06"], "improved": []})
    rose = Dimension(
        passed=False,
        numbers={"parent_pass_rate": 0.5, "pass_rate": 0.4, "parent_score": 0.957, "score": 0.962},
    )
    probe = Dimension(passed=False, numbers={"probe": ["a", "b", "c"]})
    subset_gain = Dimension(
        passed=True,
        numbers={
            "parent_pass_rate": 0.636,
            "pass_rate": 1.0,
            "parent_score": 0.9,
            "score": 0.95,
            "cases": 11,
            "left_out": 7,
        },
    )
    stored_run(
        project,
        [
            record(0, dev_score=0.957, dev_pass_rate=0.389),
            record(4, dev_pass_rate=0.611, gate={"progress": subset_gain}),
            record(1, decision="discard", dev_pass_rate=0.389, gate={"progress": subset_tie}),
            record(
                2,
                decision="discard",
                dev_score=0.962,
                dev_pass_rate=0.4,
                gate={"regression": regression, "progress": rose},
            ),
            record(3, decision="discard", dev_score=0.0, flags=["screened-out"], gate={"structure": probe}),
        ],
    ).close()
    table = {r[1]: r for r in rows(log(project, capsys, monkeypatch))}
    assert table["cand-0001"][8] == (
        "discard: no gain, tie on the 7 dev cases not yet marked unfixable (score 1.000, pass rate 1.000),"
        " nothing smaller or cheaper"
    )
    assert table["cand-0002"][8] == (
        "discard: regression, weibull-06 PASS→FAIL although the mean score rose (0.957 → 0.962)"
    )
    assert table["cand-0003"][4:8] == ["-", "-", "-", "-"]
    assert (
        table["cand-0003"][8] == "not evaluated: the first 3 dev cases crashed, timed out or printed nothing"
    )
    # `keep: fixable dev cases pass rate 0.636 → 1.000` beside `pass 0.611`: the figures name their cases.
    assert table["cand-0004"][5] == "0.6110"
    assert table["cand-0004"][8] == (
        "keep: pass rate 0.636 → 1.000, score +0.050 on the 11 dev cases not yet marked unfixable"
    )


def test_a_run_recorded_without_reasons_lists_with_reasons_from_its_gate(project, capsys, monkeypatch):
    shutil.copytree(OLD_RUNS, project / ".assay")

    entries = json.loads(log(project, capsys, monkeypatch, "--json"))
    assert len(entries) == 9 and {e["run"] for e in entries} == {OLD_RUN}
    by_id = {e["candidate_id"]: e for e in entries}
    assert by_id["cand-0003"]["reason"] == (
        "discard: regression, inst-03 PASS→FAIL; and the mean score fell too (0.903 → 0.000)"
    )
    assert by_id["cand-0007"]["reason"] == "keep: dev pass rate 0.200 → 0.600, score +0.050"
    assert by_id["cand-0001"]["reason"].startswith(
        "discard: no gain, tie on dev (score 0.903, pass rate 0.200)"
    )

    table = rows(log(project, capsys, monkeypatch))
    assert [r[0] for r in table] == [str(g) for g in range(9)]
    assert [r[8] for r in table] == [e["reason"] for e in entries]
