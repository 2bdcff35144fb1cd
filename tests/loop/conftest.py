"""A small real project for loop tests: the bin-packing example with fewer items and cases, in its own git
repository in a temp dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.runners import RUNNERS
from tests.fakes.inprocess_runner import InProcessRunner
from tests.layers import e2e_fixture
from tests.repos import committed, git

__all__ = ["git", "make_project"]

EXAMPLE = Path(__file__).parents[2] / "examples" / "binpack"


def make_project(root: Path, *, cases: int = 10, items: int = 80, extra: str = "") -> Path:
    files = {name: (EXAMPLE / name).read_text() for name in ("priority.py", "harness.py", "score.py")}
    files["cases.yaml"] = "cases:\n" + "".join(
        f"  - {{id: inst-{i:02d}, vars: {{seed: {2000 + i}}}}}\n" for i in range(cases)
    )
    files["assay.yaml"] = (
        "artifact: {kind: code, paths: [priority.py], forbid: [harness.py, score.py, cases.yaml, assay.yaml]}\n"
        "cases: {files: [cases.yaml]}\n"
        f"runner: {{type: command, command: 'python harness.py {{vars.seed}} {items}', timeout: 10}}\n"
        "checks:\n  - {type: python, value: 'score.py:check'}\n" + extra
    )
    files[".gitignore"] = ".assay/\n__pycache__/\n"
    return committed(root, files)


@pytest.fixture
def inprocess_runner(monkeypatch: pytest.MonkeyPatch) -> type[InProcessRunner]:
    """For this test, ``command`` runners are the in-process stand-in (tests/fakes/inprocess_runner.py): for
    tests of the loop's decisions, where the subprocess and the jail are not what is under test."""
    monkeypatch.setitem(RUNNERS._items, "command", InProcessRunner)
    return InProcessRunner


@pytest.fixture
@e2e_fixture("a git repository")
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


@pytest.fixture
def loop_context(project: Path):  # type: ignore[no-untyped-def]
    """A live context and an empty state for a new run of ``project`` (its baseline not yet measured), for
    testing the generation's steps one by one; the worktree and the run's files are real."""
    from assay.config import load_config
    from assay.history.records import RunRecord
    from assay.history.runfiles import RunFiles
    from assay.loop.context import Clock, LoopContext
    from assay.loop.engine import Evolution
    from assay.loop.events import Started
    from assay.loop.noise import NoiseSampler
    from assay.loop.runlog import RunLog

    evolution = Evolution(load_config(project / "assay.yaml"))
    parts = evolution._parts()
    base = evolution.git.head()
    run = RunRecord(run_id="r1", branch="assay/r1", base_commit=base)
    evolution.git.set_branch(run.branch, base)
    evolution.store.create_run(run)
    files = RunFiles(project / ".assay" / "runs" / "r1")
    worktree = project / ".assay" / "worktrees" / "r1"
    evolution.git.add_worktree(worktree, base)
    ctx = LoopContext(
        parts=parts,
        run=run,
        files=files,
        log=RunLog(files, evolution.store, "r1"),
        worktree=worktree,
        noise=NoiseSampler(parts.measurer, evolution.git, project / ".assay" / "worktrees" / "r1-parent", ""),
        clock=Clock(),
        report=lambda line: None,
    )
    state = evolution.new_state()
    ctx.emit(state, Started())
    yield ctx, state
    evolution.git.remove_worktree(worktree)
