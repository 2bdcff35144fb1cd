"""The run store suite: :func:`check_run_store`, which the run store passes on every backend it takes a URL of
(a SQLite file; PostgreSQL), and another database a user points it at can run."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor

from assay.history.records import CandidateRecord, EvaluationRow, EventRecord, RunRecord, candidate_id
from assay.history.store import RunStore, StoreError
from assay.testing._expect import expect, refused


def run_record(run_id: str = "r1", created: str = "2025-01-01T00:00:00+00:00") -> RunRecord:
    """A run with a config of a few nested values."""
    config = {"preset": "quick", "tiers": {"l3_every": 5}, "paths": ["prompt.md"]}
    return RunRecord(
        run_id=run_id, created=created, branch=f"assay/{run_id}", base_commit="a" * 40, config=config
    )


def candidate(n: int, run_id: str = "r1", **overrides: object) -> CandidateRecord:
    """Generation ``n``'s candidate, every field set (non-ASCII text, a number past 32 bits, nested gate data)."""
    fields: dict[str, object] = {
        "run_id": run_id,
        "generation": n,
        "candidate_id": candidate_id(n),
        "commit": f"{n:040d}",
        "parent": candidate_id(n - 1) if n else None,
        "layer": 2,
        "proposer": "llm",
        "description": "reword the greeting — ünïcode",
        "decision": "keep",
        "dev_score": 0.5,
        "dev_pass_rate": 0.4,
        "delta": 0.0625,
        "tokens": 12_000_000_000,
        "cost_usd": 0.0123,
        "seconds": 1.5,
        "time": "2025-01-01T00:00:00+00:00",
        "gate": {
            "progress": {"passed": True, "detail": "better", "numbers": {"before": 0.4, "after": 0.5}},
            "cost": {"passed": True, "detail": "within budget"},
        },
        "regressions": ["c3"],
        "evidence": ["traces/gen-001/c3.json"],
        "citations": ["traces/gen-000/c1.json"],
        "flags": ["many-files"],
    }
    fields.update(overrides)
    return CandidateRecord.model_validate(fields)


def event(seq: int, run_id: str = "r1", kind: str = "proposal") -> EventRecord:
    """Event ``seq`` of the run, with nested data."""
    data = {"seq": seq, "nested": {"ok": True}}
    return EventRecord(run_id=run_id, seq=seq, time="2025-01-01T00:00:00+00:00", kind=kind, data=data)


def runs_round_trip(url: str, who: str) -> None:
    with RunStore(url) as store:
        run = run_record()
        store.create_run(run)
        store.create_run(run)
        expect(store.get_run("r1") == run, f"{who}: the run read back is {store.get_run('r1')!r}")
        expect(store.get_run("missing") is None, f"{who}: a missing run is not None")
        refused(
            StoreError,
            "run r1 already exists",
            lambda: store.create_run(run.model_copy(update={"branch": "other"})),
            f"{who}: creating another run under an existing id",
        )


def runs_list_and_update(url: str, who: str) -> None:
    with RunStore(url) as store:
        store.create_run(run_record("r2", created="2025-01-02T00:00:00+00:00"))
        store.create_run(run_record("r1", created="2025-01-01T00:00:00+00:00"))
        listed = [r.run_id for r in store.list_runs()]
        expect(listed == ["r1", "r2"], f"{who}: runs listed as {listed}, not oldest first")
        updated = store.update_run("r2", status="stopped", stop_reason="plateau", best="cand-0004")
        got = (updated.status, updated.stop_reason, updated.best)
        expect(got == ("stopped", "plateau", "cand-0004"), f"{who}: the update gave {got}")
        expect(store.get_run("r2") == updated, f"{who}: the updated run reads back otherwise")
        expect(store.get_run("r1") == run_record("r1"), f"{who}: updating r2 changed r1")
        refused(
            StoreError, "status", lambda: store.update_run("r2", status="paused"), f"{who}: an unknown status"
        )
        refused(
            StoreError,
            "no run nope",
            lambda: store.update_run("nope", status="failed"),
            f"{who}: no such run",
        )
        refused(
            StoreError, "colour", lambda: store.update_run("r2", colour="red"), f"{who}: an unknown field"
        )
        expect(store.get_run("r2") == updated, f"{who}: a refused update changed the run")


def candidates_in_generation_order(url: str, who: str) -> None:
    with RunStore(url) as store:
        recs = [candidate(n) for n in (2, 0, 1)]
        recs[0] = recs[0].model_copy(update={"holdout_score": None, "commit": None, "decision": "invalid"})
        for rec in recs:
            store.add_candidate(rec)
        store.add_candidate(candidate(0, run_id="other"))
        got = store.candidates("r1")
        expect([c.generation for c in got] == [0, 1, 2], f"{who}: generations {[c.generation for c in got]}")
        expect(got == sorted(recs, key=lambda c: c.generation), f"{who}: the candidates read back otherwise")
        expect(store.candidates("nobody") == [], f"{who}: a run with no candidates has some")


def candidates_are_idempotent(url: str, who: str) -> None:
    with RunStore(url) as store:
        rec = candidate(1, decision="discard")
        store.add_candidate(rec)
        store.add_candidate(rec)
        expect(
            store.candidates("r1") == [rec],
            f"{who}: a candidate written twice is there {store.candidates('r1')}",
        )
        revised = rec.model_copy(update={"holdout_score": 0.25, "flags": ["overfitting"]})
        store.add_candidate(revised)
        expect(
            store.candidates("r1") == [revised], f"{who}: a candidate written again is not the new version"
        )


def evaluations_round_trip(url: str, who: str) -> None:
    with RunStore(url) as store:
        rows: list[EvaluationRow | Mapping[str, object]] = [
            {
                "split": "dev",
                "case_id": "c2",
                "passed": False,
                "score": 0.25,
                "trace_path": "traces/gen-001/c2.json",
            },
            EvaluationRow(split="dev", case_id="c1", passed=True, score=1.0),
            EvaluationRow(split="holdout", case_id="h1", passed=True, score=0.75),
        ]
        store.add_evaluations("r1", "cand-0001", rows)
        store.add_evaluations("r1", "cand-0001", rows)
        store.add_evaluations("r1", "cand-0002", rows[:1])
        got = store.evaluations("r1", "cand-0001")
        found = [(e.split, e.case_id, e.passed, e.score) for e in got]
        wanted = [("dev", "c1", True, 1.0), ("dev", "c2", False, 0.25), ("holdout", "h1", True, 0.75)]
        expect(found == wanted, f"{who}: the evaluations read back as {found}, not {wanted}")
        expect(
            got[1].trace_path == "traces/gen-001/c2.json" and got[0].trace_path is None,
            f"{who}: trace paths read back as {got[1].trace_path!r} and {got[0].trace_path!r}",
        )
        expect(
            len(store.evaluations("r1", "cand-0002")) == 1, f"{who}: another candidate's evaluations mixed in"
        )


def events_ordered_and_idempotent(url: str, who: str) -> None:
    with RunStore(url) as store:
        expect(store.last_event_seq("r1") == 0, f"{who}: an empty store's last event is not 0")
        for seq in (3, 1, 2):
            store.add_event(event(seq))
        store.add_event(event(2))
        store.add_event(event(1, run_id="r2"))
        got = store.events("r1")
        expect([e.seq for e in got] == [1, 2, 3], f"{who}: the events read back as {[e.seq for e in got]}")
        expect(
            got[0] == event(1) and got[0].data == {"seq": 1, "nested": {"ok": True}},
            f"{who}: event 1 read back as {got[0]!r}",
        )
        after = [e.seq for e in store.events("r1", after_seq=2)]
        expect(after == [3], f"{who}: the events after 2 are {after}")
        last = (store.last_event_seq("r1"), store.last_event_seq("r2"))
        expect(last == (3, 1), f"{who}: the last events of r1 and r2 are {last}, not (3, 1)")
        refused(
            StoreError,
            "event 2 of run r1 is already recorded",
            lambda: store.add_event(event(2, kind="decision")),
            f"{who}: another event under a recorded seq",
        )
        expect(store.events("r1")[1].kind == "proposal", f"{who}: a refused event replaced the recorded one")


def data_survives_reopen(url: str, who: str) -> None:
    with RunStore(url) as first:
        first.create_run(run_record())
        first.add_candidate(candidate(1))
        first.add_event(event(1))
    with RunStore(url) as second, RunStore(url) as third:
        second.add_candidate(candidate(1))
        third.add_event(event(1))
        expect(second.get_run("r1") == run_record(), f"{who}: the run did not survive a reopen")
        expect(third.candidates("r1") == [candidate(1)], f"{who}: the candidate did not survive a reopen")
        expect([e.seq for e in second.events("r1")] == [1], f"{who}: the events did not survive a reopen")


def concurrent_writers(url: str, who: str) -> None:
    stores = [RunStore(url, busy_timeout=30) for _ in range(3)]

    def write(target: RunStore) -> None:
        for n in range(15):
            target.add_candidate(candidate(n))
            target.add_event(event(n + 1))
            target.add_evaluations(
                "r1", candidate_id(n), [EvaluationRow(split="dev", case_id="c", passed=True, score=1)]
            )

    try:
        with ThreadPoolExecutor(len(stores)) as pool:
            list(pool.map(write, stores))
        generations = [c.generation for c in stores[0].candidates("r1")]
        expect(generations == list(range(15)), f"{who}: the candidates are {generations}")
        seqs = [e.seq for e in stores[1].events("r1")]
        expect(seqs == list(range(1, 16)), f"{who}: the events are {seqs}")
        rows = len(stores[2].evaluations("r1", candidate_id(14)))
        expect(rows == 1, f"{who}: one evaluation written by three writers is there {rows} times")
    finally:
        for opened in stores:
            opened.close()


PARTS: list[tuple[str, Callable[[str, str], None]]] = [
    ("a run round-trips and may be created twice", runs_round_trip),
    ("runs are listed and updated", runs_list_and_update),
    ("candidates round-trip in generation order", candidates_in_generation_order),
    ("candidate writes are idempotent", candidates_are_idempotent),
    ("evaluations round-trip and are idempotent", evaluations_round_trip),
    ("events are ordered, filtered and idempotent", events_ordered_and_idempotent),
    ("data survives a reopen and a second writer", data_survives_reopen),
    ("concurrent writers of the same records do not collide", concurrent_writers),
]


def check_run_store(new_url: Callable[[], str]) -> None:
    """The run store contract, each part on a fresh empty database ``new_url()`` gives the URL of: runs,
    candidates, evaluations and events round-trip as written (ordered, filtered, the same record written twice
    stored once, a different one under the same key refused with a one-line StoreError), survive a reopen and
    a second writer, and three writers of the same records at once do not collide.

    Plain function. Raises AssertionError naming the part of the contract that failed."""
    for part, run in PARTS:
        url = new_url()
        run(url, f"run store at {url.split('://', 1)[0]} ({part})")
