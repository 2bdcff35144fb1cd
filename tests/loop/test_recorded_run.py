"""A run recorded before loop state was split into owned parts (data/run-v2.tar.gz, made by
data/record_run_v2.py with the assay of that time): its events fold to what that assay's fold gave, after
every event, and `assay status`, `log`, `report` and `resume` work on it. It was also recorded before layers
had names (its commits say "assay proposal 4 L1 (tune): ..."): what it shows names them all the same."""

from __future__ import annotations

import json
import re
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from assay.config import load_config
from assay.history.runfiles import read_events
from assay.loop.engine import new_state
from assay.loop.events import Committed, Decided, Finished, Overrides, Started, Verified, typed_events
from assay.loop.flags import Flag, retried
from assay.loop.state import LoopState, apply
from assay.presets import resolve
from assay.proposers.base import TunedPoint
from assay.proposers.tune.evidence import told_score
from tests.cli.conftest import assay, git
from tests.loop.data.record_run_v2 import digest, rounded
from tests.test_layer_names import tier_tokens

DATA = Path(__file__).parent / "data"
RUN_ID = "20261203-113519-9f58"
CANDIDATES = ("--exclude=refs/notes/*", "--all")  # every commit but the notes' own (a decision's reason)


def unpack(where: Path) -> Path:
    with tarfile.open(DATA / "run-v2.tar.gz") as tar:
        tar.extractall(where, filter="data")
    return where / "proj"


def summary(state: LoopState, points: dict[str, TunedPoint]) -> dict[str, Any]:
    """The fold as comparable data, as data/record_run_v2.py's ``summary`` takes it from the flat state of
    before, here from the owned parts. Tuning's trials were a part of the state then: they are derived from the
    history now, as the tuner derives them, with the points the run recorded (``points``, by commit)."""
    lineage, spend, pipeline, feedback, watchers = (
        state.lineage,
        state.spend,
        state.pipeline,
        state.feedback,
        state.watchers,
    )
    best, retry = lineage.best, feedback.retry
    return {
        "generation": lineage.generation,
        # "reason", "overfitting" (the overfitting rule's verdict) and the operator, sites and places came after
        # the recording: empty ones are not part of what that fold gave.
        "records": [
            r.model_dump(
                mode="json", exclude={"time", "reason", "overfitting", "operator", "sites", "places"}
            )
            for r in lineage.records
        ],
        "baseline": lineage.baseline.record.candidate_id if lineage.baseline else None,
        "best": best.record.candidate_id if best else None,
        "best_measurement": [best.measurement.dev is not None, best.measurement.holdout is not None]
        if best
        else None,
        "best_tournament_score": lineage.best_tournament_score,
        "measured": sorted(lineage.measurements),
        "sizes": {commit: size.bytes for commit, size in lineage.sizes.items()},  # runs before content sizes
        "archive": [
            [n.id, n.parent, n.accuracy, n.children, n.visits, n.bt_rank] for n in lineage.archive.nodes()
        ],
        "ratings": {k: [v.rating, v.uncertainty] for k, v in lineage.ratings.backend.ratings().items()}
        if lineage.ratings
        else None,
        "pending": lineage.pending.commit if lineage.pending else None,
        "spent": spend.spent.model_dump(),
        "elapsed": spend.elapsed,
        "sessions": spend.sessions,
        "runs": spend.runs,
        "noise": spend.noise.deterministic if spend.noise else None,
        "proposals": sorted(pipeline.proposals),
        "last_proposal": pipeline.last_proposal,
        "trees": sorted(pipeline.trees),
        "tracker": [feedback.tracker.position, feedback.tracker.discards],
        "promotion_due": feedback.promotion_due,
        "history": [
            [h.generation, h.description, h.decision, h.parent, h.delta, h.proposer] for h in feedback.history
        ],
        "last_gate": feedback.last_gate,
        "retry": [retry.candidate_id, retry.score, retry.best_score, retry.needed] if retry else None,
        "trials": [
            [
                points[h.commit].study,
                told_score(
                    h.score, h.decision == "keep", h.best_score if h.best_score is not None else h.score
                ),
                h.commit,
                h.score == h.best_score,
                h.crashed,
            ]
            for h in feedback.history
            if h.commit in points and h.score is not None
        ],
        "gate_state": feedback.gate_state,
        "since_keep": watchers.since_keep,
        "kept_scores": watchers.kept_scores,
        "best_holdouts": watchers.best_holdouts,
        "content_hashes": watchers.content_hashes,
        "failing_sets": [sorted(s) for s in watchers.failing_sets],
        "failing_streak": watchers.failing_streak,
        "search_exhausted": watchers.search_exhausted,
        "suspects": watchers.suspects,
    }


# The fold was recorded on Python 3.11. On 3.12 and later, sum() of floats is compensated: ratings that tie in
# exact arithmetic differ in their last bits, and the archive ranks tied candidates another way round.
@pytest.mark.skipif(
    sys.version_info[:2] != (3, 11), reason="the fold was recorded with Python 3.11's float sums"
)
def test_the_recorded_events_fold_to_what_the_assay_that_wrote_them_folded(tmp_path: Path) -> None:
    root = unpack(tmp_path)
    config = load_config(root / "assay.yaml")
    events = typed_events(read_events(root / ".assay" / "runs" / RUN_ID))
    recorded = json.loads((DATA / "run-v2.fold.json").read_text())
    state = new_state(config, resolve(config.evolve))
    points: dict[str, TunedPoint] = {}
    hashes = []
    for event in events:
        if isinstance(event, Committed) and event.proposal.commit and event.proposal.point is not None:
            points[event.proposal.commit] = event.proposal.point
        hashes.append(digest(summary(apply(state, event), points)))
    first_differing = next(
        (i for i, (a, b) in enumerate(zip(hashes, recorded["after_each_event"], strict=True)) if a != b), None
    )
    assert first_differing is None, f"the fold differs after event {first_differing + 1}"
    assert rounded(json.loads(json.dumps(summary(state, points)))) == rounded(recorded["at_the_end"])
    # Its flags, recorded as strings, are the enum's members.
    flags = {flag for e in events if isinstance(e, Decided) for flag in e.record.flags}
    assert {Flag.GATE_RETRY, Flag.GATE_ROLLBACK, Flag.SCREENED_OUT} <= flags
    assert any(retried(e.record.flags) for e in events if isinstance(e, Decided))
    # That assay kept no overfitting verdicts: its verifications fold to none (a flag would be the 0.15 gap's).
    verified = [e for e in events if isinstance(e, Verified)]
    assert verified and all(e.overfitting is None for e in verified)
    assert all(r.overfitting is None for r in state.lineage.records)


@pytest.mark.e2e
def test_status_log_report_and_resume_work_on_the_recorded_run(tmp_path: Path) -> None:
    root = unpack(tmp_path)
    status = assay("status", cwd=root)
    assert status.returncode == 0, status.stderr
    assert RUN_ID in status.stdout and "interrupted" in status.stdout
    log = assay("log", cwd=root)
    assert log.returncode == 0, log.stderr
    assert "cand-0009" in log.stdout and "baseline" in log.stdout
    layers = [line.split("│")[3].strip() for line in log.stdout.splitlines() if "│ cand-" in line]
    assert layers == ["surface"] * 4 + ["core"] * 6 and tier_tokens(log.stdout) == []
    report = assay("report", "-o", str(tmp_path / "before.html"), cwd=root)
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "before.html").read_text()
    assert "cand-0005" in html and "→ core" in html and "→ architecture" in html and tier_tokens(html) == []
    recorded = set(git(root, "log", *CANDIDATES, "--format=%s").splitlines())
    assert any(re.match(r"assay proposal \d+ L[123] \(", s) for s in recorded)  # written the old way

    resumed = assay("resume", "-n", "11", cwd=root)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming with" not in resumed.stdout  # it recorded no command line: it runs with the one given
    assert re.search(r"^gen  10 architecture +(keep|discard) ", resumed.stdout, re.MULTILINE), resumed.stdout
    new = set(git(root, "log", *CANDIDATES, "--format=%s").splitlines()) - recorded
    assert new and all(
        re.match(r"assay (gen|proposal) \d+ (surface|core|architecture) \(", s) for s in new
    ), new
    events = typed_events(read_events(root / ".assay" / "runs" / RUN_ID))
    decided = [e.record for e in events if isinstance(e, Decided)]
    assert [r.generation for r in decided] == list(range(12))
    assert isinstance(events[-1], Finished) and events[-1].reason == "reached 11 generations"
    sessions = [e.overrides for e in events if isinstance(e, Started)]
    assert sessions[0] is None and sessions[-1] == Overrides(max_generations=11)
    status = assay("status", cwd=root)
    assert status.returncode == 0 and "finished" in status.stdout, status.stdout
    log = assay("log", cwd=root)
    assert log.returncode == 0 and "cand-0011" in log.stdout, log.stderr
    report = assay("report", "-o", str(tmp_path / "after.html"), cwd=root)
    assert report.returncode == 0, report.stderr
    assert "cand-0011" in (tmp_path / "after.html").read_text()
