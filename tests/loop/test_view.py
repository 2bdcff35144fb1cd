"""The run's read-only view: what stop rules and code outside the loop read. It is frozen and a copy, so a rule
that tries to change the run fails and the run is as its events say."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from assay.aio import run_sync
from assay.config import load_config
from assay.history.runfiles import read_events
from assay.loop.engine import Evolution
from assay.loop.events import Decided, typed_events
from assay.loop.flags import Flag
from assay.loop.state import LoopState, RunView, fold
from assay.loop.stops import StopRule, firing

from .conftest import make_project
from .test_state import baseline_events, generation, new_state


class Reassigns(StopRule):
    def check(self, run: RunView) -> str | None:
        run.since_keep = 0  # type: ignore[misc]
        return None


class Appends(StopRule):
    def check(self, run: RunView) -> str | None:
        run.kept_scores.append(1.0)  # type: ignore[attr-defined]
        return None


class RenamesTheBest(StopRule):
    def check(self, run: RunView) -> str | None:
        assert run.best is not None
        run.best.description = "mine"  # type: ignore[misc]
        return None


def folded() -> LoopState:
    return fold(
        new_state(),
        baseline_events()
        + generation(1, "keep", ("a", "b"))
        + generation(2, "discard", ("a",), parent="c1")
        + generation(3, "discard", ("a", "c"), parent="c1"),
    )


def test_the_view_shows_the_run_as_values_and_tuples() -> None:
    view = folded().view()
    assert view.generation == 3 and view.sessions == 1 and view.spent.case_runs == 17
    assert view.baseline is not None and view.baseline.candidate_id == "cand-0000"
    assert view.best is not None and view.best.commit == "c1" and view.best_pass_rate == 0.5
    assert view.last is not None and view.last.decision == "discard" and view.last.generation == 3
    assert view.since_keep == 2 and view.kept_scores == (0.5,) and view.layer == 2
    assert view.content_hashes == ("h1", "h2", "h3")
    hash(view)  # no list, dict or set anywhere in it


@pytest.mark.parametrize("rule", [Reassigns(), Appends(), RenamesTheBest()], ids=type)
def test_a_stop_rule_that_changes_the_view_fails_and_the_state_is_as_the_events_say(rule: StopRule) -> None:
    state = folded()
    before = state.view()
    with pytest.raises((dataclasses.FrozenInstanceError, AttributeError)):
        firing([rule], state.view())
    assert state.view() == before
    assert state.watchers.since_keep == 2 and state.watchers.kept_scores == [0.5]
    assert state.lineage.best is not None and state.lineage.best.record.description == "change 1"


def test_a_view_is_a_copy_later_events_do_not_change() -> None:
    state = folded()
    view = state.view()
    fold(state, generation(4, "keep", ("a", "b", "c"), parent="c1"))
    assert view.generation == 3 and view.kept_scores == (0.5,) and view.best is not None
    assert view.best.commit == "c1" and state.view().best is not None and state.view().best.commit == "c4"  # type: ignore[union-attr]


def test_the_view_shows_a_records_flags() -> None:
    events = generation(1, "discard", ("a",), flags=[Flag.GATE_RETRY, "gate-escalate"])
    view = fold(new_state(), baseline_events() + events).view()
    assert view.last is not None and view.last.flags == ("gate-retry", "gate-escalate")


@pytest.mark.e2e
def test_a_run_whose_stop_rule_changes_the_view_fails_and_resumes_as_its_events_say(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", cases=5, items=30)
    meddling = Evolution(load_config(root / "assay.yaml"), max_generations=3, stop_rules=[Appends()])
    with pytest.raises(AttributeError):
        run_sync(meddling.start())
    assert meddling.view is not None and meddling.view.kept_scores == ()
    (run_dir,) = (root / ".assay" / "runs").iterdir()
    events = typed_events(read_events(run_dir))
    assert [type(e).__name__ for e in events][-1] == "Decided"  # the baseline: nothing after the rule failed
    resumed = Evolution(load_config(root / "assay.yaml"), max_generations=3)
    outcome = run_sync(resumed.resume())
    assert outcome.run_id == run_dir.name and outcome.generations == 3
    decided = [e for e in typed_events(read_events(run_dir)) if isinstance(e, Decided)]
    assert [e.record.generation for e in decided] == [0, 1, 2, 3]
