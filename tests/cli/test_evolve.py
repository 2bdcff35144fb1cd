"""The run commands end to end, as a user types them: init, evolve, status, log, diff, adopt, resume."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest

from assay.cli.evolve import outcome_lines
from assay.history.runfiles import read_events
from assay.loop.engine import RunOutcome
from assay.loop.events import Decided, Finished, Overrides, Started, Verified, typed_events
from assay.loop.flags import Flag
from assay.loop.summary import caveat, classify
from tests.loop.conftest import make_project
from tests.loop.test_summary import record

from .conftest import EXAMPLE, assay, git


@pytest.mark.e2e
def test_init_evolve_status_log_diff_adopt(project):
    init = assay("init", cwd=project)
    assert init.returncode == 0, init.stderr
    assert "created a git repository" in init.stdout
    assert "baseline dev" in init.stdout
    head = git(project, "rev-parse", "HEAD")

    evolve = assay("evolve", "-n", "4", cwd=project)
    assert evolve.returncode == 0, evolve.stderr
    assert "stopped: reached 4 generations" in evolve.stdout
    assert evolve.stdout.count("gen ") >= 4
    assert "dev score" in evolve.stdout
    assert git(project, "rev-parse", "HEAD") == head

    status = assay("status", cwd=project)
    assert status.returncode == 0 and "finished" in status.stdout
    log = assay("log", cwd=project)
    assert log.returncode == 0 and "cand-0004" in log.stdout and "baseline" in log.stdout

    diff = assay("diff", "1", cwd=project)
    assert diff.returncode == 0
    assert diff.stdout == "" or diff.stdout.startswith("diff --git a/priority.py")

    adopt = assay("adopt", "best", cwd=project)
    assert adopt.returncode == 0, adopt.stderr
    assert "adopted cand-" in adopt.stdout and "into main by" in adopt.stdout
    assert git(project, "status", "--porcelain") == ""

    resume = assay("resume", cwd=project)
    assert resume.returncode == 2
    assert "no run to resume" in resume.stderr and "Traceback" not in resume.stderr


@pytest.mark.e2e
def test_the_readme_main_job_ends_with_its_gain_and_no_caveat(tmp_path: Path) -> None:
    """The README's first command on examples/binpack as it is. Its best passes 8 of the 14 dev cases and none of
    the four holdout cases, its holdout score up by most of its dev gain (README: 0.9573 -> 0.9736 on dev,
    0.9550 -> 0.9677 on holdout): on four holdout cases that is within chance at the paired rule's level, so it
    is not flagged overfitting, and `assay adopt best` takes it without --force. The verdict it stands on is in
    the run's log."""
    root = tmp_path / "main-job"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".assay", "__pycache__"))
    assert assay("init", cwd=root).returncode == 0
    evolve = assay("evolve", cwd=root)
    assert evolve.returncode == 0, evolve.stderr
    summary = [line.strip() for line in evolve.stdout.splitlines()]
    assert summary[-2].startswith("result: gain: dev score +"), evolve.stdout
    assert summary[-1].endswith("`assay adopt best` merges the best candidate into your branch")
    assert not any(line.startswith("caveat:") for line in summary)
    (run_dir,) = (root / ".assay" / "runs").iterdir()
    verified = [e for e in typed_events(read_events(run_dir)) if isinstance(e, Verified)]
    assert verified and all(e.overfitting is not None for e in verified)
    last = verified[-1].overfitting
    assert last is not None and last.rule == "paired" and not last.flagged
    assert last.reason.startswith(
        "its gain over the baseline on 4 holdout cases is within noise of its gain on 14 dev cases: pass rate"
    )
    adopt = assay("adopt", "best", cwd=root)
    assert adopt.returncode == 0 and "caveat" not in adopt.stdout, adopt.stdout + adopt.stderr


@pytest.mark.e2e
def test_init_refuses_a_dirty_tree_and_evolve_needs_a_repo(project):
    bare = assay("evolve", "-n", "1", cwd=project)
    assert bare.returncode == 2
    assert "not inside a git repository" in bare.stderr and "assay init" in bare.stderr
    assert assay("init", cwd=project).returncode == 0
    (project / "priority.py").write_text("# local edit\n")
    again = assay("init", cwd=project)
    assert again.returncode == 2
    assert "uncommitted changes" in again.stderr and "priority.py" in again.stderr


@pytest.mark.e2e
def test_init_writes_a_starter_config(tmp_path):
    (tmp_path / "solve.py").write_text("import sys\nprint(sys.argv[1])\n")
    (tmp_path / "cases.yaml").write_text("- {id: a, input: hi, checks: [{type: equals, value: hi}]}\n")
    first = assay("init", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "wrote assay.yaml: a starter for the program solve.py" in first.stdout
    config = (tmp_path / "assay.yaml").read_text()
    assert "paths: [solve.py]" in config and "files: [cases.yaml]" in config
    second = assay("init", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "baseline dev" in second.stdout


def test_list_parameters_shows_ranges_overrides_and_exclusions(project):
    config = (project / "assay.yaml").read_text()
    (project / "assay.yaml").write_text(
        config
        + "  parameters:\n    priority.py:priority#2: {value: 0.02}\n    priority.py:priority#4: {low: 0.1, high: 1}\n"
    )
    shown = assay("evolve", "--list-parameters", cwd=project)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "tuned    priority.py:priority#1 = 0.5 (float in [0.005, 50], log)" in lines
    assert "tuned    priority.py:priority#4 = 0.2 (float in [0.1, 1], log)" in lines
    assert "pinned   priority.py:priority#2 = 0.02 (was 0.01)" in lines
    assert not (project / ".assay" / "runs").exists()  # nothing was run


def outcome(best, *, sizes=(0, 0, "bytes"), baseline=None) -> RunOutcome:
    base = baseline or record(0)
    return RunOutcome(
        run_id="r",
        stop_reason="reached 4 generations",
        generations=4,
        baseline=base,
        best=best,
        case_runs=40,
        seconds=1.0,
        result=classify(base, best, sizes=sizes),
        caveat=caveat(base, best),
    )


def test_the_summary_names_a_gain_and_says_how_to_adopt_it():
    assert outcome_lines(outcome(record(3, dev_score=0.9))) == [
        "result: gain: dev score +0.1000 (0.8000 -> 0.9000)",
        "run r: a gain: `assay adopt best` merges the best candidate into your branch",
    ]


def test_the_summary_calls_a_kept_tie_that_shrank_the_artifact_a_simplification():
    lines = outcome_lines(outcome(record(2), sizes=(812, 640, "bytes")))
    assert lines[0].startswith("result: simplification at equal score: dev score +0.0000 (0.8000 -> 0.8000)")
    assert "artifact 812 -> 640 bytes (-21%): it removed text" in lines[0]
    assert lines[1] == (
        "run r: a simplification at equal score: `assay adopt best` merges the best candidate into your branch"
    )


def test_no_gain_gives_no_adopt_advice():
    lines = outcome_lines(outcome(record(2), sizes=(812, 812, "bytes")))
    assert lines[0].startswith("result: no gain: cand-0002 scores as the baseline")
    assert lines[1] == (
        "run r: no gain, nothing to adopt (the best is no better, smaller or cheaper than the baseline)"
    )
    assert not any("assay adopt" in line for line in lines)
    baseline = outcome_lines(outcome(record(0)))
    assert baseline[-1] == "run r: no gain, nothing to adopt (the best is the baseline)"


def test_a_best_with_a_caveat_says_so_and_that_adopt_needs_force():
    best = record(5, dev_score=0.9, holdout_score=0.9652, flags=[Flag.OVERFITTING])
    lines = outcome_lines(outcome(best, baseline=record(0, holdout_score=0.9677)))
    assert lines == [
        "result: gain: dev score +0.1000 (0.8000 -> 0.9000)",
        "caveat: cand-0005 was flagged overfitting (its holdout pass rate was more than 0.15 below its dev pass"
        " rate) and has a holdout score 0.9652 below the baseline's 0.9677",
        "run r: a gain with a caveat: `assay adopt best` refuses because of it; `assay adopt best --force`"
        " merges it anyway",
    ]


PRIORITY = """def priority(text):
    score = 0.0
    for word in text.lower().split():
        if word in ("urgent", "asap", "now"):
            score += 0.6
    return "high" if score > 0.5 else "low"
"""
USER_CASES = """cases:
  - {id: urgent, input: "urgent fix", checks: [{type: equals, value: high}]}
  - {id: later, input: "later maybe", checks: [{type: equals, value: low}]}
  - {id: now, input: "now please", checks: [{type: equals, value: high}]}
  - {id: someday, input: "some day", checks: [{type: equals, value: low}]}
  - {id: shouted, input: "URGENT: server down", checks: [{type: equals, value: high}]}
"""
RUNNERS = {
    # a script that imports the artifact, run by the shell (in the jail when bubblewrap works here)
    "command": "{type: command, command: 'python3 run.py {input}', timeout: 30}",
    # a function in a package that imports the artifact, in assay's worker
    "python": "{type: python, function: 'app.entry:answer', timeout: 30}",
}


def users_repository(root: Path) -> None:
    """A repository as a user has it: a few commits of history, no .gitignore, an untracked log, and assay's
    files written but not committed."""
    root.mkdir()
    files = {
        "priority.py": PRIORITY,
        "run.py": "import sys\nfrom priority import priority\nprint(priority(sys.argv[1]))\n",
        "app/__init__.py": "",
        "app/entry.py": "from priority import priority\n\n\ndef answer(case, artifact_dir):\n"
        "    return priority(case.text)\n",
        "README.md": "# triage\n",
    }
    git(root, "init", "-q", "-b", "main")
    for index, (name, text) in enumerate(files.items()):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
        git(root, "add", name)
        git(root, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", f"work {index}")
    (root / "notes.log").write_text("12:00 started triage\n")


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file of the user's tree (not .git, not the run data), byte for byte."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] not in (".git", ".assay")
    }


@pytest.mark.e2e
@pytest.mark.parametrize("runner", ["command", "python"])
def test_an_existing_repository_evolves_and_is_left_byte_identical(tmp_path: Path, runner: str) -> None:
    root = tmp_path / "triage"
    users_repository(root)
    (root / "assay.yaml").write_text(
        "artifact: {kind: code, paths: [priority.py], forbid: [assay.yaml, cases.yaml]}\n"
        f"cases: {{files: [cases.yaml]}}\nrunner: {RUNNERS[runner]}\n"
    )
    (root / "cases.yaml").write_text(USER_CASES)
    env = {"ASSAY_BWRAP": ""} if runner == "python" else None  # the unjailed path too
    before = tree_bytes(root)
    history = git(root, "rev-parse", "HEAD")

    init = assay("init", cwd=root, env=env)
    assert init.returncode == 0, init.stdout + init.stderr
    head = git(root, "rev-parse", "HEAD")
    assert git(root, "rev-parse", "HEAD~1") == history
    assert git(root, "show", "--name-only", "--format=", "HEAD").splitlines() == ["assay.yaml", "cases.yaml"]
    assert f"committed assay.yaml, cases.yaml as {head[:7]} (nothing else)" in init.stdout
    assert "not part of the run, left alone: notes.log" in init.stdout
    assert "baseline dev" in init.stdout and "pass 4/5" in init.stdout  # the artifact was imported and ran
    assert tree_bytes(root) == before
    assert git(root, "status", "--porcelain", "--ignored").splitlines() == ["?? notes.log", "!! .assay/"]

    evolve = assay("evolve", "-n", "3", cwd=root, env=env)
    assert evolve.returncode == 0, evolve.stdout + evolve.stderr
    assert "stopped: reached 3 generations" in evolve.stdout
    assert [line.split()[1] for line in evolve.stdout.splitlines() if line.startswith("gen ")] == [
        "1",
        "2",
        "3",
    ]
    assert evolve.stdout.count("not part of the run, left alone: notes.log") == 1
    evaluated = assay("eval", cwd=root, env=env)
    assert "pass rate 4/5" in evaluated.stdout, evaluated.stdout + evaluated.stderr
    (root / "priority.py").write_text(
        PRIORITY.replace("text.lower().split()", "text.lower().replace(':', ' ').split()")
    )
    edited = assay(
        "eval", cwd=root, env=env
    )  # eval measures the work tree as it is, uncommitted edit included
    assert "pass rate 5/5" in edited.stdout, edited.stdout + edited.stderr
    (root / "priority.py").write_bytes(before["priority.py"])

    assert tree_bytes(root) == before  # tracked files, the log and assay's files: not a byte changed or added
    assert git(root, "rev-parse", "HEAD") == head and git(root, "branch", "--show-current") == "main"
    assert git(root, "status", "--porcelain", "--ignored").splitlines() == ["?? notes.log", "!! .assay/"]


# Only the generation limit stops these runs (the config's budget is the standard preset's 100 generations).
NO_EARLY_STOP = "evolve:\n  target_pass_rate: null\n  stop_on_oscillation: false\n"


def killed_after_second_record(root: Path, *args: str) -> Path:
    """``assay evolve *args`` killed right after its second record (the baseline's and generation 1's); its run
    folder."""
    killed = assay("evolve", *args, cwd=root, env={"ASSAY_FAULT": "experiments.jsonl:2:kill"})
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    (run_dir,) = (root / ".assay" / "runs").iterdir()
    return run_dir


def decided_and_finished(run_dir: Path) -> tuple[list[int], str]:
    events = typed_events(read_events(run_dir))
    finished = [e.reason for e in events if isinstance(e, Finished)]
    return [e.record.generation for e in events if isinstance(e, Decided)], finished[-1]


@pytest.mark.e2e
def test_a_bare_resume_stops_at_the_limit_evolve_was_given(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", cases=5, items=30, extra=NO_EARLY_STOP)
    run_dir = killed_after_second_record(root, "-n", "6")
    first = typed_events(read_events(run_dir))[0]
    assert isinstance(first, Started) and first.overrides == Overrides(max_generations=6)

    resumed = assay("resume", cwd=root)
    assert resumed.returncode == 0, resumed.stderr
    assert "stopped: reached 6 generations" in resumed.stdout
    assert "resuming with" not in resumed.stdout  # nothing was changed
    assert decided_and_finished(run_dir) == (list(range(7)), "reached 6 generations")
    sessions = [e for e in typed_events(read_events(run_dir)) if isinstance(e, Started)]
    assert [(s.resumed, s.overrides) for s in sessions] == [(False, first.overrides), (True, first.overrides)]


@pytest.mark.e2e
def test_resume_changes_the_limit_only_when_told_and_says_so(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", cases=5, items=30, extra=NO_EARLY_STOP)
    run_dir = killed_after_second_record(root, "-n", "2")
    resumed = assay("resume", "-n", "3", cwd=root)
    assert resumed.returncode == 0, resumed.stderr
    head, said = resumed.stdout.splitlines()[:2]
    assert head.startswith("resume run ") and "; 3 generations at most" in head  # as evolve's first line
    assert said == "resuming with -n 3 (the run was started with -n 2)"
    assert "stopped: reached 3 generations" in resumed.stdout
    assert decided_and_finished(run_dir) == ([0, 1, 2, 3], "reached 3 generations")


@pytest.mark.e2e
def test_evolve_refuses_a_baseline_that_cannot_be_measured_and_names_a_missing_path(project):
    assert assay("init", cwd=project).returncode == 0
    as_user = ("-c", "user.name=u", "-c", "user.email=u@x")
    (project / "priority.py").write_text("def priority(item, bins:\n")  # L1 stops it: a syntax error
    git(project, *as_user, "commit", "-qam", "broken")
    refused = assay("evolve", "-n", "2", cwd=project)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith("error: ") and "assay.yaml: the baseline cannot be measured:" in line
    assert "1 critical finding: priority.py:1 " in line
    assert not (project / ".assay" / "runs").exists() or not any((project / ".assay" / "runs").iterdir())
    git(project, *as_user, "mv", "priority.py", "prio.py")
    git(project, *as_user, "commit", "-qm", "moved")
    missing = assay("evolve", "-n", "2", cwd=project)
    assert missing.returncode == 2
    assert "assay.yaml: artifact.paths[0]: no file matches 'priority.py' in" in missing.stderr
    assert "did you mean 'prio.py'?" in missing.stderr
