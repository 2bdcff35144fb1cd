"""Proposals made ahead of evaluations: the queue's order, its bound and errors, and the loop running with a
pipeline of proposals under ranked search."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from assay.aio import run_sync
from assay.config import load_config
from assay.errors import ConfigError
from assay.history.runfiles import RunFiles
from assay.loop.engine import Evolution
from assay.loop.events import ProposalMade, Proposed
from assay.loop.pipeline import ProposalsAhead
from assay.loop.proposing import Basis
from assay.loop.state import LoopState, apply
from assay.search import Archive

from .conftest import git, make_project

# The loop's decisions are under test here, not the subprocess or the jail (tests/loop/test_engine.py).
pytestmark = pytest.mark.usefixtures("inprocess_runner")


def basis(after: int) -> Basis:
    return Basis(after=after, archive=Archive(), layer=1, history=[], last_gate=[], best="c0")


def pipeline(
    state: LoopState,
    depth: int,
    priorities: dict[int, float],
    made: list[tuple[int, int]],
    fail_at: int = 0,
    width: int = 1,
):
    async def make(number: int, base: Basis) -> Proposed:
        if number == fail_at:
            raise RuntimeError("proposer broke")
        made.append((number, base.after))
        proposal = ProposalMade(
            parent="c0", layer=1, proposer="fake", description="", commit=f"c{number}", number=number
        )
        event = Proposed(number=number, proposal=proposal, priority=priorities.get(number, 9.0))
        apply(state, event)
        return event

    return ProposalsAhead(make, state, depth=depth, width=width)


async def test_proposal_n_is_made_from_the_state_after_decision_n_minus_depth() -> None:
    state = LoopState.new()
    made: list[tuple[int, int]] = []
    ahead = pipeline(state, 3, {1: 5.0, 2: 1.0, 3: 3.0, 4: 0.0}, made)
    await ahead.add_basis(basis(0))
    ahead.start()
    await asyncio.sleep(0.05)
    assert made == [(1, 0), (2, 0), (3, 0)]  # proposal 4 needs the state after decision 1
    first = await ahead.take(1)  # among proposals 1 and 2, the lower priority
    assert (first.number, first.priority) == (2, 1.0)
    state.pipeline.proposals.pop(2)  # generation 1 took it and was decided
    state.lineage.generation = 1
    await ahead.add_basis(basis(1))
    await asyncio.sleep(0.05)
    assert made[-1] == (4, 1)
    assert (await ahead.take(2)).number == 3  # among 1 and 3: proposal 4 is for generation 3 on
    dropped = await ahead.close()
    assert dropped == [1, 3, 4]  # 3 was taken but not decided here: it still waits in the state


async def test_depth_two_takes_proposals_in_order() -> None:
    state = LoopState.new()
    ahead = pipeline(state, 2, {1: 9.0, 2: 0.0}, [])
    await ahead.add_basis(basis(0))
    ahead.start()
    assert (await ahead.take(1)).number == 1  # only proposal 1 may be taken by generation 1
    await ahead.close()


async def test_a_wider_pipeline_takes_among_older_proposals_and_skips_taken_ones() -> None:
    state = LoopState.new()
    made: list[tuple[int, int]] = []
    ahead = pipeline(state, 4, {1: 5.0, 2: 1.0, 3: 0.0}, made, width=2)
    await ahead.add_basis(basis(0))
    ahead.start()
    # Two generations at once: generation g starts after decision g - 2, so it takes among proposals up to
    # g + 4 - 1 - 2 = g + 1, and not those the generation before it took but the events do not show yet.
    assert (await ahead.take(1)).number == 2
    assert (await ahead.take(2, taken={2})).number == 3
    assert (await asyncio.wait_for(ahead.take(2, taken={2, 3}), timeout=5)).number == 1
    await ahead.close()


def test_a_pipeline_not_deeper_than_its_width_is_refused() -> None:
    with pytest.raises(ValueError, match="depth above it"):
        pipeline(LoopState.new(), 3, {}, [], width=3)


async def test_a_producer_error_surfaces_in_take() -> None:
    state = LoopState.new()
    ahead = pipeline(state, 2, {}, [], fail_at=1)
    await ahead.add_basis(basis(0))
    ahead.start()
    with pytest.raises(RuntimeError, match="proposer broke"):
        await asyncio.wait_for(ahead.take(1), timeout=5)
    assert await ahead.close() == []


@pytest.mark.e2e
def test_the_loop_proposes_ahead_and_logs_what_it_dropped(tmp_path: Path) -> None:
    extra = "evolve:\n  search: ranked\n  pipeline: 3\n  target_pass_rate: null\n"
    project = make_project(tmp_path / "proj", cases=6, items=40, extra=extra)
    outcome = run_sync(Evolution(load_config(project / "assay.yaml"), max_generations=5).start())
    assert outcome.generations == 5
    files = RunFiles(project / ".assay" / "runs" / outcome.run_id)
    records = files.read_candidates()
    assert [r.generation for r in records] == list(range(6))
    events = files.read_events()
    kinds = [(e.kind, e.data.get("number") or e.data.get("generation")) for e in events]
    # ProposalMade 3 was made before generation 2 was committed for evaluation: proposing ran ahead.
    assert kinds.index(("proposed", 3)) < kinds.index(("committed", 2))
    proposed = {e.data["number"]: e.data["proposal"] for e in events if e.kind == "proposed"}
    committed = [e.data["proposal"] for e in events if e.kind == "committed"]
    for proposal in committed:  # each evaluated commit is one of the proposals, under both refs
        assert proposed[proposal["number"]]["commit"] == proposal["commit"]
        assert proposed[proposal["number"]]["parent"] == proposal["parent"]
    dropped = next(e.data for e in events if e.kind == "dropped")
    assert dropped["numbers"] and set(dropped["numbers"]).isdisjoint(c["number"] for c in committed)
    refs = git(project, "for-each-ref", "--format=%(refname:short)", f"refs/assay/{outcome.run_id}/")
    for number in dropped["numbers"]:
        if proposed[number]["commit"]:
            assert f"assay/{outcome.run_id}/proposal-{number:04d}" in refs
    worktrees = git(project, "worktree", "list")
    assert "proposals" not in worktrees  # the proposals worktree is removed at the end


@pytest.mark.e2e
def test_a_pipeline_with_greedy_search_is_a_config_error(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj", extra="evolve:\n  pipeline: 2\n")
    with pytest.raises(ConfigError, match=r"evolve\.pipeline.*search: ranked"):
        run_sync(Evolution(load_config(project / "assay.yaml"), max_generations=1).start())
