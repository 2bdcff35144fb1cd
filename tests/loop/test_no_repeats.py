"""No candidate is evaluated twice: a proposal equal to an earlier candidate (formatting and comments ignored) is
redrawn before anything is run, and a layer where nothing applies gives way to the next one without spending a
generation."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import ClassVar

import pytest

from assay.aio import run_sync
from assay.config import load_config
from assay.history.runfiles import RunFiles
from assay.loop.engine import Evolution
from assay.loop.events import Committed, Decided, Measured, typed_events
from assay.proposers.base import Proposal, Proposer, ProposerView

from .conftest import git, make_project

# The loop's decisions are under test here, not the subprocess or the jail (tests/loop/test_engine.py).
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("inprocess_runner")]

_TASKS = Path(__file__).resolve().parents[2] / "benchmarks" / "offline_tasks.py"
_SPEC = importlib.util.spec_from_file_location("offline_tasks", _TASKS)
assert _SPEC is not None and _SPEC.loader is not None
offline_tasks = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(offline_tasks)  # the benchmark's task builders (benchmarks/ is not a package)

EDITS = [  # the proposer's draws, in order: the second and third repeat the first (reformatted, commented)
    "    leftover = remaining - item\n    score = 0.6 * leftover - 0.01 * index\n",
    "    leftover = remaining-item\n    score = 0.6*leftover - 0.01*index  # again\n",
    "    leftover = (remaining - item)\n    score = (0.6 * leftover) - 0.01 * index\n",
    "    leftover = remaining - item\n    score = 0.7 * leftover - 0.01 * index\n",
]
ORIGINAL = "    leftover = remaining - item\n    score = 0.5 * leftover - 0.01 * index\n"


class Scripted(Proposer):
    """Makes the edits of EDITS one after the other, whatever the generation: draws 2 and 3 are repeats."""

    name = "scripted"
    redraws: ClassVar[int] = 3

    def __init__(self) -> None:
        self.calls = 0
        self.attempts: list[int] = []

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        self.attempts.append(view.attempt)
        edit = EDITS[min(self.calls, len(EDITS) - 1)]
        self.calls += 1
        text = view.artifact["priority.py"]
        (worktree / "priority.py").write_text(text.replace(ORIGINAL, edit))
        return Proposal(ok=True, description=f"edit {self.calls}")


def events_of(root: Path, run_id: str) -> list:  # type: ignore[type-arg]
    return typed_events(RunFiles(root / ".assay" / "runs" / run_id).read_events())


def test_repeats_are_redrawn_before_evaluation(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", cases=4, items=30, extra="evolve:\n  target_pass_rate: null\n")
    proposer = Scripted()
    outcome = run_sync(
        Evolution(load_config(root / "assay.yaml"), max_generations=2, proposer=proposer).start()
    )
    events = events_of(root, outcome.run_id)
    committed = [e.proposal for e in events if isinstance(e, Committed)]
    assert [p.description for p in committed] == ["edit 1", "edit 4"]
    assert committed[1].redrawn == ["surface repeat: edit 2", "surface repeat: edit 3"]
    assert proposer.attempts == [0, 0, 1, 2]  # each redraw is told it is one
    measured = [e.tree for e in events if isinstance(e, Measured) and e.tier == "L2"]
    assert len(measured) == 3 and len(set(measured)) == 3  # the baseline and two different candidates
    decided = [e.record for e in events if isinstance(e, Decided)]
    assert [r.generation for r in decided] == [0, 1, 2]


def test_a_proposal_with_nothing_new_anywhere_stops_the_run(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", cases=4, items=30, extra="evolve:\n  target_pass_rate: null\n")

    class Same(Proposer):
        name = "same"

        async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
            (worktree / "priority.py").write_text(view.artifact["priority.py"] + "\n# only a comment\n")
            return Proposal(ok=True, description="a comment")

    outcome = run_sync(
        Evolution(load_config(root / "assay.yaml"), max_generations=5, proposer=Same()).start()
    )
    assert outcome.stop_reason == "search exhausted: no layer gives a candidate not seen before"
    assert outcome.generations == 1
    decided = [e.record for e in events_of(root, outcome.run_id) if isinstance(e, Decided)]
    assert decided[-1].decision == "invalid" and "no-new-candidate" in decided[-1].flags
    assert not [e for e in events_of(root, outcome.run_id) if isinstance(e, Measured) and e.generation > 0]


def test_a_layer_with_no_operator_is_skipped_without_a_generation(tmp_path: Path) -> None:
    root = make_project(
        tmp_path / "p",
        cases=4,
        items=30,
        extra="evolve:\n  target_pass_rate: null\n  proposer: {type: mutate, tuning: false}\n",
    )
    (root / "priority.py").write_text(
        "import operator\n\n\ndef priority(item, remaining, index):\n    leftover = helper(remaining, item)\n"
        "    score = negate(leftover)\n    return score\n\n\n"
        "def helper(a, b):\n    return operator.sub(a, b)\n\n\ndef negate(x):\n    return operator.neg(x)\n"
    )
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "no layer-1 site in priority")
    outcome = run_sync(Evolution(load_config(root / "assay.yaml"), max_generations=3).start())
    events = events_of(root, outcome.run_id)
    first = next(e.proposal for e in events if isinstance(e, Committed))
    assert first.redrawn == ["surface: no operator applies at the surface layer"] and first.layer == 2
    decided = [e.record for e in events if isinstance(e, Decided)][1:]
    assert decided and all(r.decision != "invalid" for r in decided)


def test_the_offline_default_never_evaluates_a_tree_twice_on_funsearch_best_fit(tmp_path: Path) -> None:
    root = offline_tasks.funsearch(
        tmp_path / "fs",
        "target_pass_rate: null\nstop_on_oscillation: false\nplateau: 50\n",
        cases=4,
        items=60,
    )
    outcome = run_sync(Evolution(load_config(root / "assay.yaml"), max_generations=12).start())
    events = events_of(root, outcome.run_id)
    trees = [e.tree for e in events if isinstance(e, Measured) and e.tier == "L2"]
    assert len(trees) == outcome.generations + 1 == 13
    assert len(set(trees)) == len(trees)
    proposals = [e.proposal for e in events if isinstance(e, Committed)]
    assert {p.proposer for p in proposals} <= {"mutate", "tune"}
    assert all(p.tree and p.operator for p in proposals)
