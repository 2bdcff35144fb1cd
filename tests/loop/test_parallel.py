"""Several candidates measured at once (``evolve.parallel_candidates``): their case runs overlap in time, their
decisions are logged in generation order, the same seed gives the same run, and a run killed mid-way resumes to
the same decisions."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.aio import run_sync
from assay.config import load_config
from assay.errors import ConfigError
from assay.history.runfiles import RunFiles
from assay.loop.engine import Evolution
from assay.loop.events import Decided, typed_events
from assay.tournament import ScoresJudge
from tests.layers import e2e_fixture

from .conftest import git, make_project
from .test_crash_equivalence import Ended, assay, ended, tree

GENERATIONS = 5
# The candidates' case runs share the machine, so their time per case is not the baseline's: the gate's time
# rule is set out of reach, or timing would decide. Seed 3: a run that keeps and discards within its generations.
PARALLEL = (
    "evolve:\n  search: ranked\n  parallel_candidates: 3\n  target_pass_rate: null\n"
    "  stop_on_oscillation: false\n  seed: 3\n  gate_options: {cost_factor: 1000}\n"
)
STAMP = """import os, subprocess, sys, time
start = time.time()
time.sleep(0.05)
done = subprocess.run([sys.executable, "harness.py", *sys.argv[2:]])
with open(sys.argv[1], "a") as out:
    out.write(f"{os.getcwd()} {start} {time.time()}\\n")
sys.exit(done.returncode)
"""


def stamped_project(root: Path, stamps: Path) -> Path:
    """The loop tests' project whose runner notes where and when each case ran, in ``stamps`` (outside the
    repository; so the runner is not jailed)."""
    make_project(root, cases=5, items=30, extra=PARALLEL)
    (root / "stamp.py").write_text(STAMP)
    config = (root / "assay.yaml").read_text()
    config = config.replace("forbid: [", "forbid: [stamp.py, ").replace(
        "command: 'python harness.py", f"sandbox: none, command: 'python stamp.py {stamps}"
    )
    (root / "assay.yaml").write_text(config)
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "stamps")
    return root


def run(root: Path) -> Ended:
    done = assay(root, "evolve", "-n", str(GENERATIONS))
    assert done.returncode == 0, done.stderr[-2000:]
    return ended(root)


def decisions_of(result: Ended) -> tuple[object, ...]:
    """What must not depend on timing: the decisions, and every event but the proposals made ahead (made by a
    background task, so they fall between the others as timing has it) and a resumed run's second start."""
    return (
        result.decisions,
        result.stop_reason,
        result.case_runs,
        [k for k in result.kinds if k not in ("Proposed", "Dropped", "Started")],
    )


@pytest.fixture(scope="module")
def stamps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One file of stamps for every project here (its path is in their assay.yaml, so in their commits)."""
    return tmp_path_factory.mktemp("stamps") / "stamps"


@pytest.fixture(scope="module")
@e2e_fixture("a git repository (an evolved run)")
def reference(tmp_path_factory: pytest.TempPathFactory, stamps: Path) -> tuple[Path, Ended]:
    root = stamped_project(tmp_path_factory.mktemp("parallel") / "reference", stamps)
    return root, run(root)


@pytest.mark.e2e
def test_candidates_are_measured_at_once_and_the_same_seed_decides_the_same(
    reference: tuple[Path, Ended], stamps: Path, tmp_path: Path
) -> None:
    _, first = reference
    assert len(first.decisions) == GENERATIONS + 1
    assert {d[1] for d in first.decisions} >= {"keep", "discard"}
    spans: list[tuple[str, float, float]] = []
    for line in stamps.read_text().splitlines():
        where, start, end = line.rsplit(" ", 2)
        spans.append((where, float(start), float(end)))
    trees = {where for where, _, _ in spans if "-candidate-" in where}
    assert len(trees) == 3  # one worktree per candidate measured at once
    overlapping = {
        frozenset((a[0], b[0]))
        for a in spans
        for b in spans
        if a[0] != b[0] and "-candidate-" in a[0] and "-candidate-" in b[0] and a[1] < b[2] and b[1] < a[2]
    }
    assert overlapping, "no two candidates' case runs overlapped in time"
    again = run(stamped_project(tmp_path / "again", stamps))
    assert decisions_of(again) == decisions_of(first)


@pytest.mark.e2e
def test_decisions_are_logged_in_generation_order(reference: tuple[Path, Ended]) -> None:
    root, _ = reference
    run_dir = next((root / ".assay" / "runs").iterdir())
    steps = [
        (e.kind, e.data["record"]["generation"] if e.kind == "decided" else e.data.get("generation"))
        for e in RunFiles(run_dir).read_events()
        if e.kind in ("committed", "measured", "decided")
    ]
    assert [g for kind, g in steps if kind == "decided"] == list(range(GENERATIONS + 1))
    # Each generation's events come together, before the next generation's: nothing is logged as it finishes.
    generations = [g for _, g in steps]
    assert generations == sorted(generations)
    for generation in range(1, GENERATIONS + 1):
        mine = [kind for kind, g in steps if g == generation]
        assert mine[0] == "committed" and mine[-1] == "decided", mine


@pytest.mark.e2e
def test_a_run_killed_mid_way_resumes_to_the_same_decisions(
    reference: tuple[Path, Ended], stamps: Path, tmp_path: Path
) -> None:
    _, first = reference
    # Killed once generation 3 is measured and logged, before its decision, while generations 4 and 5 measure:
    # the resumed run decides 3 from its logged steps and measures 4 and 5 again.
    seq = [i for i, kind in enumerate(first.kinds, start=1) if kind == "Measured"][3]
    root = stamped_project(tmp_path / "killed", stamps)
    killed = assay(root, "evolve", "-n", str(GENERATIONS), fault=f"events.ndjson:{seq}:kill")
    assert killed.returncode == -9, killed.stderr[-1000:]
    resumed = assay(root, "resume", "-n", str(GENERATIONS))
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert decisions_of(ended(root)) == decisions_of(first)


@pytest.mark.e2e
def test_a_stopped_run_keeps_its_proposals_and_resumes_to_the_same_decisions(
    reference: tuple[Path, Ended], stamps: Path, tmp_path: Path
) -> None:
    _, first = reference
    root = stamped_project(tmp_path / "stopped", stamps)
    evolution = Evolution(load_config(root / "assay.yaml"), max_generations=GENERATIONS)
    lines: list[str] = []

    def report(line: str) -> None:
        lines.append(line)
        if sum(line.startswith("gen") for line in lines) == 2:  # generations 3 and 4 are measuring now
            next((root / ".assay" / "runs").iterdir()).joinpath("STOP").write_text("")

    evolution.report = report
    stopped = run_sync(evolution.start())
    assert (stopped.stop_reason, stopped.generations) == ("STOP file found", 2)
    run_dir = root / ".assay" / "runs" / stopped.run_id
    assert "dropped" not in [e.kind for e in RunFiles(run_dir).read_events()]  # they wait for the resume
    (run_dir / "STOP").unlink()
    run_sync(Evolution(load_config(root / "assay.yaml"), max_generations=GENERATIONS).resume())
    events = typed_events(RunFiles(run_dir).read_events())
    decided = [e.record for e in events if isinstance(e, Decided)]
    decisions = [
        (r.generation, r.decision, tree(root, r.commit), r.dev_score, tuple(sorted(r.flags)), r.reason)
        for r in decided
    ]
    assert decisions == first.decisions
    assert sum(e.spent.case_runs for e in events) == first.case_runs


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ("evolve:\n  search: ranked\n  parallel_candidates: 0\n", "greater than or equal to 1"),
        ("evolve:\n  parallel_candidates: 2\n", "search: ranked"),
        (
            "evolve:\n  search: ranked\n  parallel_candidates: 2\n  screening: judge\n",
            "screening: none",
        ),
    ],
    ids=["below-one", "greedy-search", "judge-screening"],
)
@pytest.mark.e2e
def test_a_bad_parallel_candidates_is_a_config_error(tmp_path: Path, extra: str, match: str) -> None:
    project = make_project(tmp_path / "proj", extra=extra)
    with pytest.raises(ConfigError, match=match) as caught:
        config = load_config(project / "assay.yaml")
        run_sync(Evolution(config, max_generations=1, judge=ScoresJudge()).start())
    assert caught.value.field == "evolve.parallel_candidates"
    assert "\n" not in str(caught.value)


@pytest.mark.e2e
def test_parallel_candidates_raise_the_pipeline_depth(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj", extra="evolve:\n  search: ranked\n  parallel_candidates: 3\n")
    assert load_config(project / "assay.yaml").evolve.pipeline_depth == 4
    deeper = make_project(
        tmp_path / "deeper", extra="evolve:\n  search: ranked\n  parallel_candidates: 3\n  pipeline: 6\n"
    )
    assert load_config(deeper / "assay.yaml").evolve.pipeline_depth == 6
