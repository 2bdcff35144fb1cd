"""Everything a run logs goes through the journal: events and candidate records, to the text files first
(append + fsync, idempotent) and then to the run store. On resume the store is brought up to the files."""

from __future__ import annotations

from typing import Any

from assay.history.records import CandidateRecord, EventRecord
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

    def candidates(self) -> list[CandidateRecord]:
        return self.files.read_candidates()

    def sync_store(self) -> int:
        """Copy what the files hold and the store lacks (a run killed between the two writes)."""
        known = {c.candidate_id for c in self.store.candidates(self.run_id)}
        missing = [c for c in self.files.read_candidates() if c.candidate_id not in known]
        for record in missing:
            self.store.add_candidate(record)
        last = self.store.last_event_seq(self.run_id)
        events = [e for e in self.files.read_events() if e.seq > last]
        for event in events:
            self.store.add_event(event)
        return len(missing) + len(events)
