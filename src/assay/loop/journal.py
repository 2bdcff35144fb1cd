"""Everything a run logs goes through the journal: events and candidate records, to the text files first
(append + fsync, idempotent) and then to the run store. On resume the store is brought up to the files."""

from __future__ import annotations

from typing import Any

from assay.history.records import CandidateRecord, EventRecord, Verification, with_verifications
from assay.history.runfiles import RunFiles
from assay.history.store import RunStore


class Journal:
    def __init__(self, files: RunFiles, store: RunStore, run_id: str) -> None:
        self.files = files
        self.store = store
        self.run_id = run_id
        events = files.read_events()
        self.seq = max([e.seq for e in events] + [store.last_event_seq(run_id)])

    def event(self, kind: str, **data: Any) -> EventRecord:
        self.seq += 1
        record = EventRecord(run_id=self.run_id, seq=self.seq, kind=kind, data=data)
        self.files.append_event(record)
        self.store.add_event(record)
        return record

    def candidate(self, record: CandidateRecord) -> None:
        self.files.append_candidate(record)
        self.store.add_candidate(record)

    def verified(self, verification: Verification) -> None:
        """Log scores measured after a candidate's record was written; the store's row of it gets them too."""
        self.event(Verification.KIND, **verification.model_dump())
        for record in self.candidates():
            if record.candidate_id == verification.candidate_id:
                self.store.add_candidate(record)

    def candidates(self) -> list[CandidateRecord]:
        """The candidates as they stand: their records, with the scores verified later filled in."""
        return with_verifications(self.files.read_candidates(), self.files.read_events())

    def sync_store(self) -> int:
        """Bring the store up to the files (a run killed between the two writes); return the rows written."""
        last = self.store.last_event_seq(self.run_id)
        events = [e for e in self.files.read_events() if e.seq > last]
        for event in events:
            self.store.add_event(event)
        stored = {c.candidate_id: c for c in self.store.candidates(self.run_id)}
        stale = [c for c in self.candidates() if stored.get(c.candidate_id) != c]
        for record in stale:
            self.store.add_candidate(record)
        return len(stale) + len(events)
