"""The journal: scores verified after a candidate's record was written reach the files' view and the store."""

from __future__ import annotations

from pathlib import Path

from assay.history.records import CandidateRecord, EventRecord, Verification, candidate_id
from assay.history.runfiles import RunFiles
from assay.history.store import RunStore
from assay.loop.journal import Journal


def _candidate(generation: int, decision: str) -> CandidateRecord:
    return CandidateRecord.model_validate(
        {
            "run_id": "r1",
            "generation": generation,
            "candidate_id": candidate_id(generation),
            "commit": f"c{generation}",
            "layer": 1,
            "proposer": "mutate",
            "description": "a change",
            "decision": decision,
            "dev_score": 0.5,
        }
    )


def test_a_verification_updates_the_candidate_in_the_files_view_and_the_store(tmp_path: Path) -> None:
    store = RunStore(f"sqlite:///{tmp_path / 'assay.db'}")
    journal = Journal(RunFiles(tmp_path / "r1"), store, "r1")
    journal.candidate(_candidate(0, "baseline"))
    journal.candidate(_candidate(1, "keep"))
    journal.verified(Verification(candidate_id="cand-0001", holdout_score=0.625, regression_pass_rate=1.0))
    assert [c.holdout_score for c in journal.candidates()] == [None, 0.625]
    assert [c.holdout_score for c in store.candidates("r1")] == [None, 0.625]
    assert store.candidates("r1")[1].regression_pass_rate == 1.0
    assert [c.holdout_score for c in RunFiles(tmp_path / "r1").read_candidates()] == [None, None]


def test_resuming_brings_a_verification_the_store_missed_to_it(tmp_path: Path) -> None:
    store = RunStore(f"sqlite:///{tmp_path / 'assay.db'}")
    files = RunFiles(tmp_path / "r1")
    journal = Journal(files, store, "r1")
    journal.candidate(_candidate(0, "baseline"))
    journal.candidate(_candidate(1, "keep"))
    # Killed after the event reached the files, before the store had it.
    data = Verification(candidate_id="cand-0001", holdout_score=0.625).model_dump()
    files.append_event(EventRecord(run_id="r1", seq=journal.seq + 1, kind=Verification.KIND, data=data))
    assert store.candidates("r1")[1].holdout_score is None
    resumed = Journal(RunFiles(tmp_path / "r1"), store, "r1")
    assert resumed.sync_store() == 2  # the event and the candidate's row
    assert store.candidates("r1")[1].holdout_score == 0.625
    assert [e.kind for e in store.events("r1")] == [Verification.KIND]
    assert resumed.sync_store() == 0
