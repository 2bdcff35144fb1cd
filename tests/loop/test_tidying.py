"""A run that a stop rule ends right after a keep first tidies the best: the offline default's removal of a
branch the keep added still runs (and is kept when nothing measured changes) before the run finishes; a
limit such as a user's own rule ends the run at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.aio import run_sync
from assay.config import load_config
from assay.history.runfiles import RunFiles
from assay.loop.engine import Evolution
from assay.loop.events import Decided, typed_events
from assay.proposers.base import Proposal, ProposerView
from assay.proposers.mutate.python_prune import PRUNE_NOTE
from assay.proposers.offline import OfflineProposer

from .conftest import git, make_project

# The loop's decisions are under test here, not the subprocess or the jail (tests/loop/test_engine.py).
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("inprocess_runner")]

START = "    leftover = remaining - item\n    score = 0.5 * leftover - 0.01 * index\n"
DEAD = "    if item > 5.0:\n        return 0.0\n"
# Best fit, the branch right above the changed line and unlike it: one run of changed lines, which the keep cannot
# revert as inert (reverting it gives back the parent); tidying the best then removes the branch.
BEST_FIT = "    leftover = remaining - item\n" + DEAD + "    score = item - remaining\n"


class FirstBestFit(OfflineProposer):
    """Generation 1: best fit with a branch no item reaches (items are at most 1); then the offline default."""

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        if view.generation == 1:
            (worktree / "priority.py").write_text(view.artifact["priority.py"].replace(START, BEST_FIT))
            return Proposal(ok=True, description="best fit, with a guard", via="mutate")
        return await super().propose(view, worktree, editable=editable)


class AfterOne:
    """A user's own stop rule: one generation."""

    def check(self, run) -> str | None:  # type: ignore[no-untyped-def]
        return "one is enough" if run.generation >= 1 else None


def decided(root: Path, run_id: str) -> list:  # type: ignore[type-arg]
    events = typed_events(RunFiles(root / ".assay" / "runs" / run_id).read_events())
    return [e.record for e in events if isinstance(e, Decided)]


def test_a_run_ended_by_its_generations_removes_the_branch_its_last_keep_added(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", cases=4, items=30, extra="evolve:\n  target_pass_rate: null\n")
    lines: list[str] = []
    evolution = Evolution(
        load_config(root / "assay.yaml"), max_generations=1, proposer=FirstBestFit(), report=lines.append
    )
    outcome = run_sync(evolution.start())
    records = decided(root, outcome.run_id)
    assert [r.decision for r in records] == ["baseline", "keep", "keep"]
    assert PRUNE_NOTE in records[2].description and "`if item > 5.0`" in records[2].description
    assert records[2].dev_score == records[1].dev_score
    assert outcome.stop_reason == "reached 1 generation" and outcome.generations == 2
    assert "reached 1 generation: tidying the best before the run ends" in lines
    best = git(root, "show", f"{outcome.best.commit}:priority.py")
    assert "score = item - remaining" in best and "if item > 5.0" not in best


def test_a_users_own_stop_rule_ends_the_run_untidied(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", cases=4, items=30, extra="evolve:\n  target_pass_rate: null\n")
    evolution = Evolution(
        load_config(root / "assay.yaml"), max_generations=5, proposer=FirstBestFit(), stop_rules=[AfterOne()]
    )
    outcome = run_sync(evolution.start())
    assert [r.decision for r in decided(root, outcome.run_id)] == ["baseline", "keep"]
    assert outcome.stop_reason == "one is enough"
    assert "if item > 5.0" in git(root, "show", f"{outcome.best.commit}:priority.py")


class AlwaysTidying(FirstBestFit):
    """A proposer of one's own that always says it has something to tidy, and whose tidying removes the branch
    while there is one and after that changes nothing."""

    def tidies(self, view: ProposerView) -> bool:
        return True

    async def tidy(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        (worktree / "priority.py").write_text(view.artifact["priority.py"].replace(DEAD, ""))
        return Proposal(ok=True, description="removed a branch no item reaches", via="mutate")


def test_tidying_that_makes_nothing_new_ends_the_run(tmp_path: Path) -> None:
    """Before, a proposer that still said it tidied but only repeated itself made an invalid generation forever."""
    root = make_project(tmp_path / "p", cases=4, items=30, extra="evolve:\n  target_pass_rate: null\n")
    evolution = Evolution(load_config(root / "assay.yaml"), max_generations=1, proposer=AlwaysTidying())
    outcome = run_sync(evolution.start())
    assert [r.decision for r in decided(root, outcome.run_id)] == ["baseline", "keep", "keep", "invalid"]
    assert outcome.stop_reason == "reached 1 generation" and outcome.generations == 3
    assert "if item > 5.0" not in git(root, "show", f"{outcome.best.commit}:priority.py")
