"""The run's log: every event goes to events.ndjson (appended and fsynced) and the run store, then to the views
that are built from it: experiments.jsonl, results.tsv and the store's candidate rows from ``decided`` events
(with the scores of later ``verified`` events), and noise.json from the baseline's ``noise`` event.

Opening the log cuts a torn last line from each file; :meth:`RunLog.catch_up` then brings every view up to the
events, so a run killed between two writes loses nothing that was logged.
"""

from __future__ import annotations

import json

from assay.fsutil import atomic_write_text
from assay.history.records import CandidateRecord
from assay.history.runfiles import RunFiles
from assay.history.store import RunStore
from assay.loop.events import Decided, Event, NoiseMeasured, Verified, to_record, typed_events

NOISE_FILE = "noise.json"


class RunLog:
    """Appends a run's events and keeps its views in step with them."""

    def __init__(self, files: RunFiles, store: RunStore, run_id: str) -> None:
        self.files = files
        self.store = store
        self.run_id = run_id
        self._records = files.read_events()
        self.seq = self._records[-1].seq if self._records else 0
        self._candidates: dict[str, CandidateRecord] = {}

    def events(self) -> list[Event]:
        """The typed events logged so far, read back (UntypedRun for a run folder of an older assay)."""
        return typed_events(self._records)

    def append(self, event: Event) -> None:
        """Log ``event`` as the next one, then update the views."""
        self.seq += 1
        record = to_record(event, run_id=self.run_id, seq=self.seq)
        self.files.append_event(record)
        self.store.add_event(record)
        self._records.append(record)
        self._view(event)

    def catch_up(self, events: list[Event]) -> None:
        """Bring the store's events and every view up to ``events`` (the ones read at opening)."""
        stored_seq = self.store.last_event_seq(self.run_id)
        for record in self._records:
            if record.seq > stored_seq:
                self.store.add_event(record)
        stored = {c.candidate_id: c for c in self.store.candidates(self.run_id)}
        for event in events:
            self._view(event, stored)

    def _view(self, event: Event, stored: dict[str, CandidateRecord] | None = None) -> None:
        """Update the views with ``event``; ``stored`` (when catching up) is what the store already holds."""
        if isinstance(event, Decided):
            record = event.record
            self._candidates[record.candidate_id] = record
            self.files.append_candidate(record)
            if stored is None or record.candidate_id not in stored:
                self.store.add_candidate(record)
        elif isinstance(event, Verified):
            known = self._candidates.get(event.candidate_id)
            if known is None:
                return
            updated = event.update(known)
            self._candidates[event.candidate_id] = updated
            if stored is None or stored.get(event.candidate_id) != updated:
                self.store.add_candidate(updated)
        elif isinstance(event, NoiseMeasured):
            path = self.files.run_dir / NOISE_FILE
            if stored is None or not path.exists():
                runs = {"commit": event.commit, "runs": event.runs}
                atomic_write_text(path, json.dumps(runs, indent=1) + "\n")
