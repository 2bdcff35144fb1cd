"""A resumed run takes up the command line it was started with: the overrides recorded in its `started` events,
each replaced only by one the resume is told (and then a line says so); a run recorded before overrides were
resumes with what it is told."""

from __future__ import annotations

import json

from assay.history.records import EventRecord
from assay.loop.events import Overrides, Started, from_record, to_record, typed_events
from assay.loop.overrides import last_session, take_up

NOTHING = Overrides()


def test_the_overrides_are_recorded_in_the_started_event_and_read_back() -> None:
    started = Started(
        overrides=Overrides(max_generations=6, preset="quick", executor="ray", no_cache=True, proposer="tune")
    )
    stored = to_record(started, run_id="r1", seq=1)
    assert stored.data["overrides"] == {
        "max_generations": 6,
        "preset": "quick",
        "executor": "ray",
        "no_cache": True,
        "proposer": "tune",
    }
    back = from_record(EventRecord.load(json.loads(stored.model_dump_json())))
    assert back == started


def test_a_run_recorded_before_overrides_were_resumes_with_what_it_is_told() -> None:
    # The first event as the assay before this change wrote it: no "overrides" field.
    old = EventRecord(
        run_id="r1", seq=1, kind="started", data={"schema": 2, "resumed": False, "elapsed": 0.0, "spent": {}}
    )
    events = typed_events([old])
    assert isinstance(events[0], Started) and events[0].overrides is None
    assert last_session(events) is None
    told = Overrides(max_generations=11)
    assert take_up(told, last_session(events), generations=100) == (told, [])
    assert take_up(NOTHING, None, generations=100) == (NOTHING, [])


def test_a_bare_resume_keeps_every_override_the_run_was_started_with() -> None:
    started = Overrides(max_generations=6, preset="quick", executor="ray", no_cache=True, proposer="llm")
    assert take_up(NOTHING, Started(overrides=started), generations=20) == (started, [])


def test_a_limit_changes_only_when_told_and_a_line_says_so() -> None:
    session = Started(overrides=Overrides(max_generations=6))
    merged, lines = take_up(Overrides(max_generations=12), session, generations=100)
    assert merged == Overrides(max_generations=12)
    assert lines == ["resuming with -n 12 (the run was started with -n 6)"]
    assert take_up(Overrides(max_generations=6), session, generations=100) == (
        Overrides(max_generations=6),
        [],
    )


def test_a_run_started_without_n_names_the_limit_it_had() -> None:
    merged, lines = take_up(Overrides(max_generations=12), Started(overrides=NOTHING), generations=100)
    assert merged.max_generations == 12
    assert lines == ["resuming with -n 12 (the run was started without -n: 100 generations)"]
    # Told the limit it already had: nothing changes, nothing to say.
    assert take_up(Overrides(max_generations=100), Started(overrides=NOTHING), generations=100)[1] == []


def test_the_executor_preset_and_cache_change_only_when_told() -> None:
    session = Started(overrides=Overrides(preset="quick", executor="ray"))
    merged, lines = take_up(Overrides(executor="local", no_cache=True), session, generations=20)
    assert merged == Overrides(preset="quick", executor="local", no_cache=True)
    assert lines == [
        "resuming with --executor local (the run was started with --executor ray)",
        "resuming with --no-cache (the run was started with the cache)",
    ]
    merged, lines = take_up(Overrides(preset="deep"), Started(overrides=NOTHING), generations=100)
    assert merged.preset == "deep" and lines == [
        "resuming with --preset deep (the run was started without --preset)"
    ]


def test_the_latest_session_that_recorded_its_overrides_is_the_one_taken_up() -> None:
    events = [
        Started(overrides=Overrides(max_generations=6)),
        Started(resumed=True, overrides=Overrides(max_generations=12)),
        Started(resumed=True),  # a session of an assay that recorded none does not hide the one before
    ]
    session = last_session(events)
    assert session is events[1]
    assert take_up(NOTHING, session, generations=100) == (Overrides(max_generations=12), [])
    _, lines = take_up(Overrides(max_generations=8), session, generations=100)
    assert lines == ["resuming with -n 8 (the run was last resumed with -n 12)"]
