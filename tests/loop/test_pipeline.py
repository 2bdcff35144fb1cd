"""Proposals made ahead of evaluations: the queue's order, its bound and errors, and the loop running with a
pipeline of proposals under ranked search."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from assay.aio import run_sync
from assay.config import load_config
from assay.errors import ConfigError
from assay.history.runfiles import RunFiles
from assay.loop.engine import Evolution
from assay.loop.pipeline import ProposalPipeline

from .conftest import git, make_project


async def test_takes_the_lowest_priority_first_and_never_runs_more_than_depth_ahead() -> None:
    made: list[int] = []
    priorities = {1: 5.0, 2: 1.0, 3: 3.0, 4: 0.0}

    async def produce(number: int) -> tuple[float, str | None, dict[str, Any]]:
        made.append(number)
        return priorities.get(number, 9.0), f"c{number}", {"n": number}

    pipeline = ProposalPipeline(produce, depth=3)
    pipeline.start()
    await asyncio.sleep(0.05)
    assert made == [1, 2, 3]  # bounded: the fourth waits for a free slot
    first = await pipeline.take()
    assert (first.number, first.commit, first.priority) == (2, "c2", 1.0)
    await asyncio.sleep(0.05)
    assert made == [1, 2, 3, 4]
    assert [(await pipeline.take()).number for _ in range(2)] == [4, 3]
    await asyncio.sleep(0.05)
    assert made == [1, 2, 3, 4, 5, 6]  # the three taken freed three slots
    dropped = await pipeline.close()
    assert [q.number for q in dropped] == [1, 5, 6]


async def test_a_producer_error_surfaces_in_take() -> None:
    async def produce(number: int) -> tuple[float, str | None, dict[str, Any]]:
        if number == 2:
            raise RuntimeError("proposer broke")
        return 0.0, None, {}

    pipeline = ProposalPipeline(produce, depth=1)
    pipeline.start()
    assert (await pipeline.take()).number == 1
    with pytest.raises(RuntimeError, match="proposer broke"):
        await pipeline.take()
    assert await pipeline.close() == []


def test_the_loop_proposes_ahead_and_logs_what_it_dropped(tmp_path: Path) -> None:
    extra = "evolve:\n  search: ranked\n  pipeline: 3\n  target_pass_rate: null\n"
    project = make_project(tmp_path / "proj", cases=6, items=40, extra=extra)
    outcome = run_sync(Evolution(load_config(project / "assay.yaml"), max_generations=5).start())
    assert outcome.generations == 5
    files = RunFiles(project / ".assay" / "runs" / outcome.run_id)
    records = files.read_candidates()
    assert [r.generation for r in records] == list(range(6))
    events = files.read_events()
    kinds = [(e.kind, e.data.get("proposal") or e.data.get("generation")) for e in events]
    # Proposal 3 was made before generation 2 was committed for evaluation: proposing ran ahead.
    assert kinds.index(("proposed", 3)) < kinds.index(("committed", 2))
    proposed = {e.data["proposal"]: e.data for e in events if e.kind == "proposed"}
    committed = [e.data for e in events if e.kind == "committed"]
    for event in committed:  # each evaluated commit is one of the proposals, under both refs
        assert proposed[event["proposal"]]["commit"] == event["commit"]
        assert proposed[event["proposal"]]["parent"] == event["parent"]
    dropped = next(e.data for e in events if e.kind == "dropped")
    assert dropped["proposals"] and set(dropped["proposals"]).isdisjoint(c["proposal"] for c in committed)
    refs = git(project, "for-each-ref", "--format=%(refname:short)", f"refs/assay/{outcome.run_id}/")
    for number in dropped["proposals"]:
        if proposed.get(number):
            assert f"assay/{outcome.run_id}/proposal-{number:04d}" in refs
    worktrees = git(project, "worktree", "list")
    assert "proposals" not in worktrees  # the proposals worktree is removed at the end


def test_a_pipeline_with_greedy_search_is_a_config_error(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj", extra="evolve:\n  pipeline: 2\n")
    with pytest.raises(ConfigError, match=r"evolve\.pipeline.*search: ranked"):
        run_sync(Evolution(load_config(project / "assay.yaml"), max_generations=1).start())
