"""A kept candidate is adopted without the sites whose reversal changes no dev case's result (assay.loop.inert):
the site model on its own, then runs of the loop whose first candidate changes two numbers."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.aio import run_sync
from assay.config import load_config
from assay.history.runfiles import RunFiles
from assay.loop.engine import Evolution, RunOutcome
from assay.loop.events import Decided, Event, Measured, Trimmed, typed_events
from assay.loop.inert import changed_sites, reverted
from assay.loop.runlog import RunLog
from assay.proposers.base import Proposal, Proposer, ProposerView

from .conftest import git, make_project

PARENT = "def f(x, spare=0.5):\n    if x > 9:\n        return spare\n    y = 0.3 * x\n    return y\n"


def test_a_file_that_changed_only_numbers_changes_at_its_number_sites() -> None:
    candidate = PARENT.replace("spare=0.5", "spare=0.7312").replace("0.3 * x", "-0.25 * x")
    sites = changed_sites({"f.py": PARENT}, {"f.py": candidate})
    assert [(s.name, s.old) for s in sites] == [("f.py:f#1", 0.5), ("f.py:f#3", 0.3)]
    assert reverted({"f.py": PARENT}, {"f.py": candidate}, sites[:1]) == {
        "f.py": PARENT.replace("0.3 * x", "-0.25 * x")
    }
    assert reverted({"f.py": PARENT}, {"f.py": candidate}, sites) == {"f.py": PARENT}


def test_config_numbers_are_sites_by_key() -> None:
    parent, candidate = '{"a": 1.5, "b": [2, 3], "c": "x"}', '{"a": 2.5, "b": [2, 4], "c": "x"}'
    sites = changed_sites({"p.json": parent}, {"p.json": candidate})
    assert [s.name for s in sites] == ["p.json:a", "p.json:b[1]"]
    assert reverted({"p.json": parent}, {"p.json": candidate}, sites[1:]) == {
        "p.json": '{"a": 2.5, "b": [2, 3], "c": "x"}'
    }


def test_other_changes_are_runs_of_lines_and_a_simplification_is_no_site() -> None:
    candidate = (
        "def f(x, spare=0.75):\n    if x < 0:\n        return 0.0\n    if x > 9:\n        return spare\n"
        "    return x\n"
    )
    sites = changed_sites({"f.py": PARENT}, {"f.py": candidate, "new.py": "x = 1\n"})
    # The changed default, the new guard and `return y` become `return x`; the deleted `y = 0.3 * x` is no site.
    assert [s.name for s in sites] == ["f.py:1", "f.py:2-3", "f.py:6"]
    assert reverted({"f.py": PARENT}, {"f.py": candidate}, sites[1:2])["f.py"] == candidate.replace(
        "    if x < 0:\n        return 0.0\n", ""
    )
    assert reverted({"f.py": PARENT}, {"f.py": candidate}, sites[:1])["f.py"].startswith(
        "def f(x, spare=0.5):"
    )


# -- in the loop -------------------------------------------------------------------------------------------------

START = '''def priority(item: float, remaining: float, index: int, spare: float = 0.5) -> float:
    """Score for placing ``item`` into a bin with ``remaining`` free capacity; ``spare`` for oversized items."""
    if item > 5.0:
        return spare
    leftover = remaining - item
    score = 0.5 * leftover - 0.01 * index
    if leftover < 0.1:
        score = score - 0.2
    return score
'''
BEST_FIT = ("0.5 * leftover", "-0.5 * leftover")  # fewer bins on every case
INERT = ("spare: float = 0.5", "spare: float = 0.7312")  # a default nobody passes, read where no item goes
# With best fit, a bonus for a tight fit packs some cases tighter still.
BONUS = ("score - 0.2", "score - -1.0")

pytestmark = pytest.mark.usefixtures("inprocess_runner")


class Edits(Proposer):
    """Generation 1: ``START`` with the given replacements; nothing after."""

    name = "edits"

    def __init__(self, *edits: tuple[str, str]) -> None:
        self.edits = edits

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        text = view.artifact["priority.py"]
        for old, new in self.edits:
            text = text.replace(old, new)
        (worktree / "priority.py").write_text(text)
        sites = ["priority.py:priority#1", "priority.py:priority#3"]  # as tuning names them
        return Proposal(ok=True, description="two numbers", sites=sites)


def started(tmp_path: Path) -> Path:
    """A project of 6 dev cases of 200 items whose priority has a ``spare`` default (and nothing to tidy)."""
    extra = "evolve:\n  target_pass_rate: null\n  gate_options: {cost_factor: 1000}\n"
    root = make_project(tmp_path / "p", cases=6, items=200, extra=extra)
    config = (root / "assay.yaml").read_text()
    all_dev = "cases: {files: [cases.yaml], split: {dev: 1.0, holdout: 0.0, regression: 0.0}}"
    (root / "assay.yaml").write_text(config.replace("cases: {files: [cases.yaml]}", all_dev))
    (root / "priority.py").write_text(START)
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "a priority with a spare")
    return root


def events_of(root: Path, outcome: RunOutcome) -> list[Event]:
    return typed_events(RunFiles(root / ".assay" / "runs" / outcome.run_id).read_events())


def evolve(root: Path, *edits: tuple[str, str]) -> tuple[RunOutcome, list[Event]]:
    evolution = Evolution(load_config(root / "assay.yaml"), max_generations=1, proposer=Edits(*edits))
    outcome = run_sync(evolution.start())
    return outcome, events_of(root, outcome)


@pytest.mark.e2e
def test_a_kept_candidate_is_adopted_without_its_inert_change(tmp_path: Path) -> None:
    root = started(tmp_path)
    outcome, events = evolve(root, BEST_FIT, INERT)
    kept = [e.record for e in events if isinstance(e, Decided)][1]
    assert kept.decision == "keep" and kept.commit == outcome.best.commit
    assert kept.description == "two numbers (reverted as inert: priority.py:priority#1)"
    assert kept.sites == ["priority.py:priority#3"] and kept.places == ["priority.py:6 (priority)"]
    assert git(root, "show", f"{kept.commit}:priority.py") == START.replace(*BEST_FIT).rstrip("\n")
    # The candidate as proposed stays reachable, as the adopted one's git parent.
    assert "0.7312" in git(root, "show", f"{kept.commit}^:priority.py")
    (trimmed,) = [e for e in events if isinstance(e, Trimmed)]
    assert trimmed.reverted == ["priority.py:priority#1"]
    # Two trials: the spare back at 0.5 gives every dev case as it was (6 runs: 1, then the other 5 the candidate
    # changed against its parent); both numbers back give the start, whose first case differs (1 run). They count
    # in the budget.
    assert trimmed.spent.case_runs == 7
    assert outcome.case_runs == sum(e.spent.case_runs for e in events) == 6 + 6 + 7


@pytest.mark.e2e
def test_a_file_saved_on_windows_keeps_its_line_ends_and_mark_when_trimmed(tmp_path: Path) -> None:
    root = started(tmp_path)
    (root / "priority.py").write_bytes(b"\xef\xbb\xbf" + START.replace("\n", "\r\n").encode())
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "as Notepad saves it")
    outcome, events = evolve(root, BEST_FIT, INERT)
    (trimmed,) = [e for e in events if isinstance(e, Trimmed)]
    assert trimmed.reverted == ["priority.py:priority#1"]
    assert outcome.best.commit is not None
    adopted = subprocess.run(
        ["git", "show", f"{outcome.best.commit}:priority.py"], cwd=root, capture_output=True, check=True
    ).stdout
    assert adopted == b"\xef\xbb\xbf" + START.replace(*BEST_FIT).replace("\n", "\r\n").encode()


@pytest.mark.e2e
def test_a_candidate_whose_changes_all_matter_is_kept_whole(tmp_path: Path) -> None:
    root = started(tmp_path)
    outcome, events = evolve(root, BEST_FIT, BONUS)
    kept = [e.record for e in events if isinstance(e, Decided)][1]
    assert kept.decision == "keep" and kept.description == "two numbers"
    assert git(root, "show", f"{outcome.best.commit}:priority.py") == (
        START.replace(*BEST_FIT).replace(*BONUS).rstrip("\n")
    )
    (trimmed,) = [e for e in events if isinstance(e, Trimmed)]
    # Either number back changes the first case (1 run each).
    assert trimmed.reverted == [] and trimmed.proposal is None and trimmed.spent.case_runs == 2


class Killed(BaseException):
    """The process ended right after an event was logged."""


@pytest.mark.e2e
@pytest.mark.parametrize(
    "dies_after",
    [lambda e: isinstance(e, Measured) and e.generation == 1, lambda e: isinstance(e, Trimmed)],
    ids=["before-the-trials", "after-the-trials"],
)
def test_a_run_killed_around_its_trials_resumes_as_the_run_uninterrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dies_after: Callable[[Event], bool]
) -> None:
    reference, expected = evolve(started(tmp_path / "a"), BEST_FIT, INERT)
    root = started(tmp_path / "b")
    logged = RunLog.append

    def append(self: RunLog, event: Event) -> None:
        logged(self, event)
        if dies_after(event):
            raise Killed

    monkeypatch.setattr(RunLog, "append", append)
    with pytest.raises(Killed):
        evolve(root, BEST_FIT, INERT)
    monkeypatch.setattr(RunLog, "append", logged)
    again = Evolution(load_config(root / "assay.yaml"), max_generations=1, proposer=Edits(BEST_FIT, INERT))
    outcome = run_sync(again.resume())
    events = events_of(root, outcome)
    # The trials ran once, and the resumed run kept what the uninterrupted one kept, at the same cost.
    assert [e.type for e in events if e.type != "started"] == [
        e.type for e in expected if e.type != "started"
    ]
    assert outcome.case_runs == reference.case_runs
    assert git(root, "rev-parse", f"{outcome.best.commit}^{{tree}}") == git(
        tmp_path / "a" / "p", "rev-parse", f"{reference.best.commit}^{{tree}}"
    )


@pytest.mark.e2e
def test_a_dead_branch_beside_a_simplification_is_reverted(tmp_path: Path) -> None:
    """A simplification is no site (reverting it lengthens the code), so the branch was the candidate's one site,
    and it was left untried: reverting the one site of a candidate must differ from its parent to be tried."""
    root = started(tmp_path)
    shorter = ("    score = 0.5 * leftover - 0.01 * index\n", "    score = -leftover\n")
    dead = (
        "    leftover = remaining - item\n",
        "    if item > 9.0:\n        return 0.0\n    leftover = remaining - item\n",
    )
    outcome, events = evolve(root, shorter, dead)
    kept = [e.record for e in events if isinstance(e, Decided)][1]
    assert kept.decision == "keep" and kept.description == "two numbers (reverted as inert: priority.py:5-6)"
    assert git(root, "show", f"{outcome.best.commit}:priority.py") == START.replace(*shorter).rstrip("\n")
    (trimmed,) = [e for e in events if isinstance(e, Trimmed)]
    assert trimmed.reverted == ["priority.py:5-6"] and trimmed.spent.case_runs == 6
