"""The run log: typed events on disk, the views built from them, and catching up after a kill between writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.evaluation.evaluator import EvalResult
from assay.history.records import CandidateRecord, EventRecord, candidate_id
from assay.history.runfiles import RunFiles
from assay.history.store import RunStore
from assay.loop.events import (
    EVENTS_SCHEMA,
    Decided,
    NoiseMeasured,
    Spend,
    Started,
    UntypedRun,
    Verified,
    from_record,
    to_record,
    typed_events,
)
from assay.loop.flags import Flag
from assay.loop.runlog import RunLog
from assay.loop.summary import caveat
from assay.model import CaseResult, Output, Split


def candidate(generation: int, decision: str = "keep") -> CandidateRecord:
    return CandidateRecord(
        run_id="r1",
        generation=generation,
        candidate_id=candidate_id(generation),
        commit=f"c{generation}",
        layer=1,
        proposer="mutate",
        description=f"change {generation}",
        decision=decision,  # type: ignore[arg-type]
        dev_score=0.5,
    )


def result(*passed: bool) -> EvalResult:
    return EvalResult(
        cases=[
            CaseResult(id=f"h{i}", split=Split.HOLDOUT, passed=p, score=float(p), output=Output())
            for i, p in enumerate(passed)
        ]
    )


def test_events_round_trip_through_their_stored_form() -> None:
    event = Decided(record=candidate(3), spent=Spend(case_runs=4, tokens=7), elapsed=1.5)
    stored = to_record(event, run_id="r1", seq=9)
    assert (stored.kind, stored.seq) == ("decided", 9) and "type" not in stored.data
    back = from_record(EventRecord.load(json.loads(stored.model_dump_json())))
    assert back == event
    assert to_record(Started(), run_id="r1", seq=1).data["schema"] == EVENTS_SCHEMA


def test_an_event_log_of_an_older_assay_is_refused_with_its_reason() -> None:
    old = [EventRecord(run_id="r1", seq=1, kind="noise", data={"runs_per_case": 1})]
    with pytest.raises(UntypedRun, match="older assay"):
        typed_events(old)
    unknown = [to_record(Started(), run_id="r1", seq=1), EventRecord(run_id="r1", seq=2, kind="remeasured")]
    with pytest.raises(UntypedRun, match=r"event 2 \(remeasured\)"):
        typed_events(unknown)


def test_decisions_and_verifications_make_the_views(tmp_path: Path) -> None:
    store = RunStore(f"sqlite:///{tmp_path / 'assay.db'}")
    log = RunLog(RunFiles(tmp_path / "r1"), store, "r1")
    log.append(Started())
    log.append(NoiseMeasured(commit="c0", runs={"a": [1.0, 0.0]}, runs_per_case=2))
    log.append(Decided(record=candidate(0, "baseline")))
    log.append(Decided(record=candidate(1)))
    log.append(Verified(candidate_id="cand-0001", commit="c1", holdout=result(True, False, True, True)))
    files = RunFiles(tmp_path / "r1")
    assert [c.candidate_id for c in files.read_candidates()] == ["cand-0000", "cand-0001"]
    assert [row["candidate"] for row in files.read_results_tsv()] == ["cand-0000", "cand-0001"]
    assert [c.holdout_score for c in store.candidates("r1")] == [None, 0.75]
    assert [c.holdout_score for c in files.read_candidates()] == [None, None]  # written once, at the decision
    assert [e.seq for e in store.events("r1")] == [1, 2, 3, 4, 5]
    assert json.loads((tmp_path / "r1" / "noise.json").read_text())["runs"] == {"a": [1.0, 0.0]}
    assert [type(e).__name__ for e in RunLog(files, store, "r1").events()] == [
        "Started",
        "NoiseMeasured",
        "Decided",
        "Decided",
        "Verified",
    ]


def test_a_verification_with_the_overfitting_gap_flags_the_stored_candidate(tmp_path: Path) -> None:
    store = RunStore(f"sqlite:///{tmp_path / 'assay.db'}")
    log = RunLog(RunFiles(tmp_path / "r1"), store, "r1")
    log.append(Started())
    log.append(Decided(record=candidate(0, "baseline")))
    log.append(Decided(record=candidate(1).model_copy(update={"dev_pass_rate": 1.0})))
    log.append(Verified(candidate_id="cand-0001", commit="c1", holdout=result(True, False, False, True)))
    # What `assay log`, `status` and `adopt` read: the store's records.
    records = store.candidates("r1")
    assert [c.flags for c in records] == [[], [Flag.OVERFITTING]]
    assert caveat(records[0], records[1]).startswith("cand-0001 was flagged overfitting")
    # A resumed run's catch-up gives the store the same record again.
    again = RunLog(RunFiles(tmp_path / "r1"), store, "r1")
    again.catch_up(again.events())
    assert [c.flags for c in store.candidates("r1")] == [[], [Flag.OVERFITTING]]


def test_catch_up_rebuilds_every_view_the_kill_left_behind(tmp_path: Path) -> None:
    store = RunStore(f"sqlite:///{tmp_path / 'assay.db'}")
    log = RunLog(RunFiles(tmp_path / "r1"), store, "r1")
    log.append(Started())
    log.append(Decided(record=candidate(0, "baseline")))
    # Killed after the events reached events.ndjson, before the store and the views had them.
    files = RunFiles(tmp_path / "r1")
    for seq, event in (
        (3, Decided(record=candidate(1))),
        (4, Verified(candidate_id="cand-0001", commit="c1", holdout=result(True, False))),
    ):
        files.append_event(to_record(event, run_id="r1", seq=seq))
    (tmp_path / "r1" / "experiments.jsonl").write_text(
        (tmp_path / "r1" / "experiments.jsonl").read_text().splitlines()[0] + "\n"
    )
    assert [c.candidate_id for c in store.candidates("r1")] == ["cand-0000"]
    resumed = RunLog(RunFiles(tmp_path / "r1"), store, "r1")
    resumed.catch_up(resumed.events())
    files = RunFiles(tmp_path / "r1")
    assert [c.candidate_id for c in files.read_candidates()] == ["cand-0000", "cand-0001"]
    assert [row["candidate"] for row in files.read_results_tsv()] == ["cand-0000", "cand-0001"]
    assert [c.holdout_score for c in store.candidates("r1")] == [None, 0.5]
    assert [e.seq for e in store.events("r1")] == [1, 2, 3, 4]
    assert resumed.seq == 4
    resumed.append(Decided(record=candidate(2, "discard")))
    assert [e.seq for e in store.events("r1")] == [1, 2, 3, 4, 5]
