"""Run records: ids, defaults, JSON round trips and loading of older or richer versions."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from pydantic import ValidationError

from assay.history.records import (
    SCHEMA_VERSION,
    CandidateRecord,
    EvaluationRow,
    EventRecord,
    RunRecord,
    best_candidate,
    candidate_id,
    now_iso,
    upgrade,
)


def _candidate(**overrides: object) -> CandidateRecord:
    fields: dict[str, object] = {
        "run_id": "r1",
        "generation": 3,
        "candidate_id": candidate_id(3),
        "commit": "abc123",
        "parent": "cand-0002",
        "layer": 1,
        "proposer": "mutate",
        "description": "swap two statements",
        "decision": "keep",
        "dev_score": 0.75,
        "gate": {"progress": {"passed": True, "detail": "better", "numbers": {"delta": 0.1}}},
        "regressions": ["case-9"],
        "flags": ["many-files"],
    }
    fields.update(overrides)
    return CandidateRecord.model_validate(fields)


def test_candidate_id_is_zero_padded() -> None:
    assert candidate_id(7) == "cand-0007"
    assert candidate_id(12345) == "cand-12345"


def test_now_iso_is_utc_iso8601() -> None:
    stamp = datetime.fromisoformat(now_iso())
    assert stamp.utcoffset() is not None and stamp.utcoffset().total_seconds() == 0


def test_candidate_defaults_and_key() -> None:
    rec = _candidate()
    assert rec.schema_version == SCHEMA_VERSION
    assert (rec.tokens, rec.cost_usd, rec.seconds) == (0, 0.0, 0.0)
    assert rec.holdout_score is None and rec.evidence == [] and rec.citations == []
    assert rec.key == ("r1", "cand-0003")
    datetime.fromisoformat(rec.time)


def test_candidate_json_round_trip_is_lossless() -> None:
    rec = _candidate(description="tab\there, newline\nthere, ünïcode", holdout_score=0.5, delta=-0.25)
    assert CandidateRecord.load(json.loads(rec.model_dump_json())) == rec


def test_unknown_decision_is_rejected() -> None:
    with pytest.raises(ValidationError, match="decision"):
        _candidate(decision="maybe")


def test_older_record_without_version_and_extra_fields_loads() -> None:
    data = _candidate().model_dump()
    del data["schema_version"]
    data["field_from_the_future"] = 1
    rec = CandidateRecord.load(data)
    assert rec.schema_version == SCHEMA_VERSION
    assert upgrade({"x": 1}) == {"x": 1, "schema_version": SCHEMA_VERSION}


def test_event_run_and_evaluation_records() -> None:
    event = EventRecord(run_id="r1", seq=4, kind="decision", data={"candidate": "cand-0004"})
    assert event.key == ("r1", 4)
    run = RunRecord(run_id="r1", branch="assay/r1", base_commit="abc")
    assert run.status == "running" and run.stop_reason is None and run.best is None
    with pytest.raises(ValidationError, match="status"):
        RunRecord(run_id="r1", branch="b", base_commit="c", status="paused")  # type: ignore[arg-type]
    row = EvaluationRow(split="dev", case_id="c1", passed=True, score=1.0)
    assert row.trace_path is None


def test_the_best_candidate_is_the_last_kept_or_the_baseline() -> None:
    baseline = _candidate(generation=0, candidate_id=candidate_id(0), decision="baseline")
    kept = _candidate(generation=2, candidate_id=candidate_id(2), decision="keep")
    later = [_candidate(generation=g, candidate_id=candidate_id(g), decision="discard") for g in (3, 4)]
    assert best_candidate([baseline]) is baseline
    assert best_candidate([baseline, _candidate(generation=1, decision="invalid")]) is baseline
    assert best_candidate([baseline, _candidate(generation=1, decision="keep"), kept, *later]) is kept
    with pytest.raises(ValueError):
        best_candidate([])


def test_the_best_candidate_of_an_ended_run_is_the_one_it_named() -> None:
    baseline = _candidate(generation=0, candidate_id=candidate_id(0), decision="baseline", commit="c0")
    first = _candidate(generation=1, candidate_id=candidate_id(1), decision="keep", commit="c1")
    last = _candidate(generation=2, candidate_id=candidate_id(2), decision="keep", commit="c2")
    records = [baseline, first, last]
    named = RunRecord(run_id="r1", branch="b", base_commit="c0", status="finished", best="c1")
    assert best_candidate(records, named) is first  # final_pick: rating named an earlier keep
    assert best_candidate(records, named.model_copy(update={"best": "c0"})) is baseline
    # While the run goes on (resumed after it ended), the best is the last kept again.
    assert best_candidate(records, named.model_copy(update={"status": "running"})) is last
    assert best_candidate(records, named.model_copy(update={"best": "unknown"})) is last
