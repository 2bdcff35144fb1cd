"""The evolve loop on a real git repository with real subprocess evaluations."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from assay.aio import run_sync
from assay.config import load_config
from assay.errors import AssayError
from assay.history.runfiles import RunFiles
from assay.history.store import RunStore
from assay.loop.engine import Evolution
from assay.loop.flags import Flag
from assay.loop.summary import caveat

from .conftest import git, make_project

pytestmark = pytest.mark.e2e


def evolve(project: Path, **kwargs):
    evolution = Evolution(load_config(project / "assay.yaml"), **kwargs)
    return run_sync(evolution.start()), evolution


def test_run_logs_every_candidate_and_leaves_the_user_branch(project):
    head = git(project, "rev-parse", "HEAD")
    outcome, _ = evolve(project, max_generations=6)
    assert outcome.generations == 6
    assert git(project, "rev-parse", "HEAD") == head
    assert git(project, "status", "--porcelain") == ""
    files = RunFiles(project / ".assay" / "runs" / outcome.run_id)
    records = files.read_candidates()
    assert [r.generation for r in records] == list(range(7))
    assert records[0].decision == "baseline"
    assert len(files.read_results_tsv()) == 7
    store = RunStore(f"sqlite:///{project / '.assay' / 'assay.db'}")
    assert [r.candidate_id for r in store.candidates(outcome.run_id)] == [r.candidate_id for r in records]
    kept = [r for r in records if r.decision in ("baseline", "keep")]
    assert git(project, "rev-parse", f"assay/{outcome.run_id}") == kept[-1].commit
    refs = git(project, "for-each-ref", "--format=%(refname) %(objectname)", f"refs/assay/{outcome.run_id}/")
    committed = {r.candidate_id: r.commit for r in records[1:] if r.commit}
    assert {line.split()[0].rsplit("/", 1)[1]: line.split()[1] for line in refs.splitlines()} == committed
    for record in records[1:]:
        assert record.decision in ("keep", "discard", "invalid")
        if "screened-out" in record.flags:  # its first dev cases all crashed: only structure was judged
            assert set(record.gate) == {"structure"} and not record.gate["structure"].passed
        elif record.decision != "invalid":
            assert set(record.gate) >= {"structure", "progress", "regression", "cost", "safety"}
    plan = (files.run_dir / "plan.md").read_text()
    assert plan.startswith("# assay run")
    assert "- budget: 6 generations, 3600s wall clock, no plateau rule" in plan  # none can fire within 6
    matches = [e for e in files.read_events() if e.kind == "matches"]
    evaluated = [r for r in records[1:] if r.dev_score is not None and "screened-out" not in r.flags]
    assert [e.data["candidate"] for e in matches] == [r.candidate_id for r in evaluated]
    for record, event in zip(evaluated, matches, strict=True):
        assert record.gate["tournament"].numbers["rating"] == event.data["rating"]
        assert sum(map(len, event.data["updates"])) >= 3  # three rounds against the baseline, plus the pool
        # A baseline match is won when the candidate's own score (its mean case score on the match's sample of
        # cases) exceeds 0.55 (seed 000's rule); the baseline win rate is the share of baseline rounds won.
        rounds = [m for m in event.data["matches"] if m["kind"] == "baseline"]
        own = [float(re.search(r"own score ([\d.]+)", m["reason"]).group(1)) for m in rounds]  # type: ignore[union-attr]
        assert len(rounds) == 3 and [m["won"] for m in rounds] == [score > 0.55 for score in own]
        assert event.data["baseline_win_rate"] == pytest.approx(sum(m["won"] for m in rounds) / 3)
    assert outcome.best.dev_score >= outcome.baseline.dev_score
    # The summary's kind of result follows from the scores (a kept tie: smaller, or no gain).
    if outcome.best.dev_score > outcome.baseline.dev_score:
        assert outcome.result.kind == "gain", outcome.result
    elif outcome.best.candidate_id == outcome.baseline.candidate_id:
        assert outcome.result.kind == "no gain"
    else:
        assert outcome.result.kind in ("simplification", "no gain"), outcome.result
    assert outcome.caveat == caveat(outcome.baseline, outcome.best)


def test_refuses_a_dirty_tree_and_a_missing_repo(project, tmp_path):
    (project / "priority.py").write_text("# edited\n")
    with pytest.raises(AssayError, match="uncommitted changes"):
        evolve(project, max_generations=1)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "assay.yaml").write_text((project / "assay.yaml").read_text())
    (plain / "priority.py").write_text("x = 1\n")
    with pytest.raises(AssayError, match="not inside a git repository"):
        evolve(plain, max_generations=1)


def agent_project(tmp_path: Path, script: str, **kwargs) -> Path:
    """A project whose agent proposer runs ``script``, kept outside the project (the agent works on a copy of
    the editable files; it reads its own program through ``home_ro``)."""
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "agent.py").write_text(script)
    extra = (
        f"evolve:\n  proposer: {{type: agent, command: 'python {tools / 'agent.py'}', timeout: 30,"
        f" home_ro: ['{tools}'], allow_unsandboxed: true}}\n"
        "  layers: [1]\n  discards_per_layer: 50\n"
    )
    return make_project(tmp_path / "agent", extra=extra, **kwargs)


SCOPE_AGENT = """
from pathlib import Path
p = Path("priority.py")
p.write_text(p.read_text().replace("0.5 * leftover", "-1.0 * leftover"))
Path("harness.py").write_text("print('hijacked')\\n")
Path("helper.py").write_text("SHORTCUT = 1\\n")
print("best fit, a harness edit and a new file")
"""


def test_edits_outside_the_scope_are_reverted_and_flagged(tmp_path):
    root = agent_project(tmp_path, SCOPE_AGENT)
    outcome, _ = evolve(root, max_generations=1)
    record = RunFiles(root / ".assay" / "runs" / outcome.run_id).read_candidates()[1]
    assert "scope-violation" in record.flags
    assert record.commit
    tree = git(root, "ls-tree", "--name-only", record.commit)
    assert "helper.py" not in tree.splitlines()
    show = subprocess.run(
        ["git", "show", f"{record.commit}:harness.py"], cwd=root, capture_output=True, text=True
    )
    assert "hijacked" not in show.stdout
    changed = git(root, "diff", "--name-only", f"{record.commit}~1", record.commit)
    assert changed.splitlines() == ["priority.py"]
    assert record.decision == "keep"


HANG_AGENT = """
from pathlib import Path
Path("priority.py").write_text("def priority(item, remaining, index):\\n    while True:\\n        pass\\n")
print("an endless loop")
"""


def test_a_hanging_candidate_is_discarded(tmp_path):
    root = agent_project(tmp_path, HANG_AGENT, cases=3, items=20)
    config = root / "assay.yaml"
    config.write_text(config.read_text().replace("timeout: 10", "timeout: 1"))
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "short timeout")
    outcome, _ = evolve(root, max_generations=1)
    record = RunFiles(root / ".assay" / "runs" / outcome.run_id).read_candidates()[1]
    assert record.decision == "discard"
    assert record.dev_pass_rate == 0
    assert git(root, "rev-parse", f"assay/{outcome.run_id}") == git(root, "rev-parse", "HEAD")


def test_stop_file_ends_the_run(project):
    evolution = Evolution(load_config(project / "assay.yaml"), max_generations=50)
    reports: list[str] = []

    def report(line: str) -> None:
        reports.append(line)
        if sum(r.startswith("gen") for r in reports) == 2:
            run_dir = next((project / ".assay" / "runs").iterdir())
            (run_dir / "STOP").write_text("")

    evolution.report = report
    outcome = run_sync(evolution.start())
    assert outcome.stop_reason == "STOP file found"
    assert outcome.generations == 2
    store = RunStore(f"sqlite:///{project / '.assay' / 'assay.db'}")
    assert store.get_run(outcome.run_id).status == "stopped"


FLOOD_AGENT = """
from pathlib import Path
p = Path("priority.py")
p.write_text("import sys\\nsys.stdout.write('x' * 50_000_000)\\n" + p.read_text())
print("prints a flood")
"""

DELETE_AGENT = """
from pathlib import Path
Path("priority.py").unlink()
print("deleted the artifact")
"""


def test_a_flooding_candidate_is_capped_and_discarded(tmp_path):
    root = agent_project(tmp_path, FLOOD_AGENT, cases=3, items=20)
    outcome, _ = evolve(root, max_generations=1)
    record = RunFiles(root / ".assay" / "runs" / outcome.run_id).read_candidates()[1]
    assert record.decision == "discard"
    assert record.dev_pass_rate == 0
    assert record.seconds < 60


def test_a_candidate_deleting_the_artifact_is_stopped_at_l1(tmp_path):
    root = agent_project(tmp_path, DELETE_AGENT, cases=3, items=20)
    outcome, _ = evolve(root, max_generations=1)
    record = RunFiles(root / ".assay" / "runs" / outcome.run_id).read_candidates()[1]
    assert record.decision == "discard"
    assert record.dev_score is None  # never evaluated: the L1 static tier stopped it
    assert record.gate["structure"].passed is False
    assert re.fullmatch(r"discard: L1 static, \d+ critical findings?", record.reason), record.reason
    assert (root / "priority.py").exists()


def test_backpressure_gate_by_name_and_bad_gate_names(tmp_path):
    extra = "evolve:\n  gate: backpressure\n  gate_options: {min_delta: 0.001, max_retries: 1}\n"
    root = make_project(tmp_path / "bp", cases=4, items=40, extra=extra)
    outcome, _ = evolve(root, max_generations=4)
    records = RunFiles(root / ".assay" / "runs" / outcome.run_id).read_candidates()
    decided = [r for r in records[1:] if r.decision != "invalid" and "screened-out" not in r.flags]
    assert decided and all("progress" in r.gate for r in decided)
    assert all(r.decision == "keep" or any(f.startswith("gate-") for f in r.flags) for r in decided)
    for r in decided:  # the reason names the gate's action and the delta it judged
        action = "keep" if r.decision == "keep" else "retry" if "gate-retry" in r.flags else "rollback"
        assert re.match(rf"{action}: (dev )?score [+-]\d\.\d{{4}} ", r.reason), (
            r.flags,
            r.reason,
        )
    config = root / "assay.yaml"
    config.write_text(config.read_text().replace("gate: backpressure", "gate: backpresure"))
    with pytest.raises(AssayError, match=r"evolve.gate.*backpressure"):
        evolve(root, max_generations=1)


def test_ranked_search_builds_on_other_candidates_than_the_best(tmp_path):
    extra = (
        "evolve:\n  search: ranked\n  layers: [1]\n  discards_per_layer: 50\n  stop_on_oscillation: false\n"
    )
    root = make_project(tmp_path / "ranked", cases=4, items=40, extra=extra)
    outcome, _ = evolve(root, max_generations=8)
    records = RunFiles(root / ".assay" / "runs" / outcome.run_id).read_candidates()
    evaluated = {records[0].commit} | {r.commit for r in records[1:] if r.dev_score is not None}
    best_so_far = records[0].commit
    off_best = 0
    for record in records[1:]:
        assert record.parent in evaluated  # every parent is a candidate the run evaluated
        off_best += record.parent != best_so_far
        if record.decision == "keep":
            best_so_far = record.commit
    assert off_best >= 1
    assert git(root, "rev-parse", f"assay/{outcome.run_id}") == best_so_far


def test_unknown_search_strategy_is_a_config_error(project):
    config = project / "assay.yaml"
    config.write_text(config.read_text() + "evolve:\n  search: beam\n")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "beam")
    with pytest.raises(AssayError, match=r"evolve.search.*greedy"):
        evolve(project, max_generations=1)


def test_a_run_whose_candidates_cannot_be_proposed_or_evaluated_stops_naming_the_error(tmp_path):
    from assay.proposers.base import Proposal, Proposer, ProposerView

    class Mute(Proposer):
        name = "mute"

        async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
            return Proposal(ok=False, description="", error="no SEARCH/REPLACE block in the answer")

    class Breaks(Proposer):
        name = "breaks"

        async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
            text = f"import helpers_{view.generation}\n" + view.artifact["priority.py"]
            (worktree / "priority.py").write_text(text)
            return Proposal(ok=True, description="imports a module that is not there")

    extra = "evolve:\n  target_pass_rate: null\n  stop_after_failed: 3\n"
    outcome, _ = evolve(
        make_project(tmp_path / "a", cases=4, items=30, extra=extra), max_generations=20, proposer=Mute()
    )
    assert outcome.generations == 3
    assert outcome.stop_reason == (
        "dead end: the last 3 candidates could not be proposed or evaluated"
        " (3 of 3: proposal failed: no SEARCH/REPLACE block in the answer)"
    )
    outcome, _ = evolve(
        make_project(tmp_path / "b", cases=4, items=30, extra=extra), max_generations=20, proposer=Breaks()
    )
    assert outcome.generations == 3
    assert outcome.stop_reason.startswith(
        "dead end: the last 3 candidates could not be proposed or evaluated (1 of 3: "
    )
    assert "No module named 'helpers_" in outcome.stop_reason


def test_l3_at_a_decision_records_the_overfitting_verdict_everywhere_a_record_goes(tmp_path):
    """With L3 due at every generation, each kept candidate is judged by the overfitting rule when it is decided:
    its record (experiments.jsonl, the run store) carries the verdict, and the flag follows the verdict."""
    root = make_project(tmp_path / "proj", cases=20, extra="evolve: {l3_every: 1, max_generations: 6}\n")
    outcome, _ = evolve(root)
    records = RunFiles(root / ".assay" / "runs" / outcome.run_id).read_candidates()
    kept = [r for r in records[1:] if r.decision == "keep"]
    assert kept, "the run kept nothing: no decision ran L3"
    for rec in kept:
        assert rec.overfitting is not None and rec.overfitting.rule == "paired", rec
        assert (Flag.OVERFITTING in rec.flags) == rec.overfitting.flagged
        assert rec.overfitting.numbers["holdout_cases"] == 4 and rec.overfitting.numbers["dev_cases"] == 14
    assert all(r.overfitting is None for r in records if r.decision != "keep")  # L3 runs on kept ones only
    store = RunStore(f"sqlite:///{root / '.assay' / 'assay.db'}")
    assert [r.overfitting for r in store.candidates(outcome.run_id)] == [r.overfitting for r in records]
