"""The run report from real runs: a finished one, one of a single generation, a killed one, one in progress;
what it shows is what the run's files hold, and it is one self-contained file."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from markupsafe import escape

from assay.config import load_config
from assay.history.records import best_candidate
from assay.history.runfiles import RunFiles
from assay.report import render_run, run_report
from assay.report.sources import find_run

from .conftest import assay, evolved

pytestmark = pytest.mark.e2e

MAX_BYTES = 2 * 1024 * 1024


def run_files(root: Path) -> RunFiles:
    (run_dir,) = (root / ".assay" / "runs").iterdir()
    return RunFiles(run_dir)


def external_references(html: str) -> list[str]:
    """Every src/href/url() that points off the page (a self-contained page has none)."""
    refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"'#][^"']*)["']""", html)
    refs += re.findall(r"url\(([^)]*)\)", html)
    return [r for r in refs if not r.startswith("data:")]


def test_the_report_of_a_run_shows_every_candidate_as_its_files_record_it(binpack_run: Path) -> None:
    config = load_config(binpack_run / "assay.yaml")
    report = run_report(config, None)
    records = run_files(binpack_run).read_candidates()
    assert [n.id for n in report.nodes] == [r.candidate_id for r in records]
    assert [n.decision for n in report.nodes] == [r.decision for r in records]
    assert [n.dev_score for n in report.nodes] == [r.dev_score for r in records]
    assert [n.reason for n in report.nodes] == [r.reason for r in records] and all(r.reason for r in records)
    best = best_candidate(records)
    assert report.best is not None and report.best.id == best.candidate_id
    assert report.stop_reason == find_run(config, None).stop_reason and report.status == "finished"
    assert report.stop_reason
    assert report.spent.case_runs > 10 * len(records) // 2 and report.elapsed > 0
    for node in report.nodes[1:]:
        assert node.parent_id is not None and node.parent_id.startswith("cand-")
        if node.commit is not None and node.decision == "keep":
            assert any(line.kind in ("add", "del") for line in node.diff), node.id
            assert node.gate and all(d.passed for d in node.gate.values())
        if node.decision == "discard":
            assert not all(d.passed for d in node.gate.values())
    # Every kept candidate's dev cases; the outputs of the baseline's and the best's, and of the cases whose
    # verdict changed for the others; the baseline -> best diff.
    assert all(len(n.cases) == len(report.nodes[0].cases) for n in report.kept)
    for node in report.nodes:
        whole = node is report.baseline or node is report.best
        assert [c.id for c in node.cases if c.output is not None] == [
            c.id for c in node.cases if whole or c.id in node.changed
        ], node.id
    if best.decision == "keep":
        assert any(line.kind == "add" for line in report.best_diff)
    # Each operator's record: as many proposals, keeps and as much gain as the records say it made.
    moves = dict(report.moves)
    made = [r for r in records if r.commit is not None and r.decision != "baseline"]
    assert sum(t.proposed for t in moves.values()) == len(made) and moves
    for name, tally in moves.items():
        mine = [r for r in made if (r.operator or r.proposer) == name]
        assert tally.proposed == len(mine) and tally.kept == sum(r.decision == "keep" for r in mine)
        kept_gain = sum(max(0.0, r.delta or 0.0) for r in mine if r.decision == "keep")
        assert tally.gain == pytest.approx(kept_gain)

    done = assay("report", "-o", "out/report.html", cwd=binpack_run)
    assert done.returncode == 0, done.stderr
    assert re.search(
        rf"report of run \S+ \({len(records)} candidates\): .*report\.html \(\d+ KiB, [\d.]+s\)", done.stdout
    )
    html = (binpack_run / "out" / "report.html").read_text()
    assert len(html.encode()) < MAX_BYTES
    assert external_references(html) == []
    assert "default-src 'none'" in html  # the page may not fetch anything, even if a trace says so
    assert html.count('<section class="detail"') == len(records)
    for record in records:  # in the candidate's header and in its row of the table of all candidates
        assert html.count(f"{escape(record.reason)}<") >= 2, record.reason
    assert 'class="chart trajectory"' in html and 'class="chart lineage"' in html
    assert f'data-start="{best.candidate_id}"' in html
    assert '<table id="moves">' in html and all(f"<td>{name}</td>" in html for name in moves)


def test_the_default_report_goes_to_the_run_folder_and_never_into_the_artifact(binpack_run: Path) -> None:
    done = assay("report", cwd=binpack_run)
    assert done.returncode == 0, done.stderr
    assert (run_files(binpack_run).run_dir / "report.html").is_file()
    refused = assay("report", "-o", "priority.py", cwd=binpack_run)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "error: priority.py: one of the artifact's files (artifact.paths); write the report elsewhere"
    ]
    inside = assay("report", "-o", ".assay/worktrees/x.html", cwd=binpack_run)
    assert inside.returncode == 2 and "inside the candidates' worktrees" in inside.stderr
    unknown = assay("report", "nope", cwd=binpack_run)
    assert unknown.returncode == 2 and "no run 'nope'; recent runs:" in unknown.stderr


def test_a_run_of_one_generation_renders(tmp_path: Path) -> None:
    root = evolved(tmp_path / "one", 1)
    report = run_report(load_config(root / "assay.yaml"), "latest")
    assert [n.generation for n in report.nodes] == [0, 1]
    html = render_run(report)
    assert html.count('<section class="detail"') == 2 and "</html>" in html


def test_a_killed_run_renders_with_its_undecided_candidate(binpack_run: Path, tmp_path: Path) -> None:
    # Kill the same run (mutate is seeded) right after it logs its second `committed` event.
    events = run_files(binpack_run).read_events()
    second = [e.seq for e in events if e.kind == "committed"][1]
    root = evolved(tmp_path / "killed", 12, ASSAY_FAULT=f"events.ndjson:{second}:kill")
    report = run_report(load_config(root / "assay.yaml"), None)
    assert report.status == "interrupted" and report.stop_reason is None
    assert report.nodes[-1].decision == "pending" and report.nodes[-1].generation == 2
    html = render_run(report)
    assert 'id="node-pending"' in html and "still running or killed" in html


def test_a_run_in_progress_renders(tmp_path: Path) -> None:
    from tests.loop.conftest import make_project

    root = make_project(tmp_path / "live", cases=10, items=60)
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", "evolve", "-n", "200"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        events = root / ".assay" / "runs"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            paths = list(events.glob("*/events.ndjson"))
            if paths and paths[0].read_text().count('"kind":"decided"') >= 2:
                break
            time.sleep(0.2)
        report = run_report(load_config(root / "assay.yaml"), None)
        assert report.status == "running" and report.stop_reason is None
        assert len([n for n in report.nodes if n.decision != "pending"]) >= 2
        assert "</html>" in render_run(report)
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_a_shared_run_report_leaves_out_evidence_and_holdout_cases(binpack_run: Path) -> None:
    report = run_report(load_config(binpack_run / "assay.yaml"), None)
    full = render_run(report)
    evidence = {
        ch.evidence.text for n in report.nodes for c in n.cases for ch in c.checks if ch.evidence.text
    }
    holdout = {c.id for n in report.nodes for c in n.holdout}
    assert evidence and holdout and "holdout cases <span" in full
    # The overfitting rule's verdict names holdout figures: shown in full, left out when shared.
    judged = [n for n in report.nodes if n.overfitting is not None]
    assert judged and all((n.overfitting.flagged) == ("overfitting" in n.flags) for n in judged)  # type: ignore[union-attr]
    assert all(str(escape(n.overfitting.reason)) in full for n in judged)  # type: ignore[union-attr]
    done = assay("report", "--share", "-o", "shared.html", cwd=binpack_run)
    assert done.returncode == 0, done.stderr
    shared = (binpack_run / "shared.html").read_text()
    assert "shared version" in shared and "holdout cases <span" not in shared
    assert not [text for text in evidence if text in shared]
    assert not [cid for cid in holdout if f">{cid}<" in shared]
    assert "paired rule)" in full and "paired rule)" not in shared
