"""``assay adopt`` killed half-way leaves the user's branch and tree as they were, and the next adopt finishes
the job; an older assay's half-made merge is aborted, the user's own merge refused."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

from assay.faults import FAULT_VAR

from .conftest import assay, git

pytestmark = pytest.mark.e2e

AS_USER = ("-c", "user.name=u", "-c", "user.email=u@x")


def evolved(project: Path) -> tuple[str, str]:
    """Init and evolve the project; the best candidate's id and full commit (not the baseline's)."""
    assert assay("init", cwd=project).returncode == 0
    evolve = assay("evolve", "-n", "4", cwd=project)
    assert evolve.returncode == 0, evolve.stderr
    best = re.search(r"best (cand-\d{4}) \(([0-9a-f]{12})\)", evolve.stdout)
    assert best and best.group(1) != "cand-0000", evolve.stdout
    return best.group(1), git(project, "rev-parse", best.group(2))


def commit_as_user(project: Path, name: str, text: str) -> str:
    (project / name).write_text(text)
    git(project, "add", name)
    git(project, *AS_USER, "commit", "-q", "-m", f"user: {name}")
    return git(project, "rev-parse", "HEAD")


def merging(project: Path) -> bool:
    return (project / ".git" / "MERGE_HEAD").exists()


def test_adopt_killed_before_the_branch_moves_changes_nothing_and_the_next_adopt_merges(project):
    best_id, best = evolved(project)
    user = commit_as_user(project, "NOTES.md", "the user's own work\n")

    killed = assay("adopt", "best", cwd=project, env={FAULT_VAR: "adopt:before-ref-update"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not merging(project)
    assert git(project, "status", "--porcelain") == ""
    assert git(project, "rev-parse", "HEAD") == user

    again = assay("adopt", "best", cwd=project)
    assert again.returncode == 0, again.stderr
    notice, result = again.stdout.splitlines()
    assert re.fullmatch(
        r"an earlier assay adopt \(pid \d+ on .+\) was interrupted before it finished; .+", notice
    )
    assert result.startswith(f"adopted {best_id} ({best[:12]}): ") and result.endswith(
        " into main by a merge commit"
    )
    assert git(project, "rev-parse", "HEAD^1", "HEAD^2").split() == [user, best]
    assert not merging(project) and git(project, "status", "--porcelain") == ""
    assert len(git(project, "worktree", "list").splitlines()) == 1  # its temporary work tree is gone


def test_an_older_adopts_merge_is_aborted_and_the_users_own_merge_refused(project):
    best_id, best = evolved(project)
    base = git(project, "rev-parse", "HEAD")
    git(project, "switch", "-q", "-c", "side")
    side = commit_as_user(project, "side.txt", "side\n")
    git(project, "switch", "-q", "main")
    git(project, *AS_USER, "merge", "-q", "--no-ff", "--no-commit", "side")

    refused = assay("adopt", "best", cwd=project)
    assert refused.returncode == 2
    assert (
        "that assay did not start; finish it (git commit) or abort it (git merge --abort)" in refused.stderr
    )
    assert len(refused.stderr.strip().splitlines()) == 1
    assert git(project, "rev-parse", "HEAD", "MERGE_HEAD").split() == [base, side]
    assert git(project, "diff", "--cached", "--name-only") == "side.txt"
    git(project, "merge", "--abort")

    # An older assay merged in the user's tree; killed there, it left this behind.
    git(
        project,
        *AS_USER,
        "merge",
        "-q",
        "--no-ff",
        "--no-commit",
        "-m",
        f"assay: adopt {best_id} of run r",
        best,
    )
    adopt = assay("adopt", "best", cwd=project)
    assert adopt.returncode == 0, adopt.stderr
    notice, result = adopt.stdout.splitlines()
    assert (
        notice
        == f"aborted the merge an interrupted assay adopt left in {project.resolve()} (MERGE_HEAD {best[:12]})"
    )
    assert result.startswith(f"adopted {best_id} (") and result.endswith(" into main by fast-forward")
    assert git(project, "rev-parse", "HEAD") == best
    assert not merging(project) and git(project, "status", "--porcelain") == ""


def test_a_conflicting_adopt_says_adopted_nowhere_and_the_option_it_offers_exists(project):
    best_id, best = evolved(project)
    user = commit_as_user(
        project, "priority.py", "def priority(item, bins):\n    return bins  # the user's\n"
    )

    refused = assay("adopt", "best", cwd=project)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "adopted" not in refused.stdout
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith(
        f"error: not adopted: {best_id} conflicts with main in priority.py; nothing was changed"
    )
    assert line.endswith("`assay adopt best --branch NAME` puts it on a new branch to merge by hand")
    assert git(project, "rev-parse", "HEAD") == user and git(project, "status", "--porcelain") == ""

    offered = assay("adopt", "best", "--branch", "try-best", cwd=project)
    assert offered.returncode == 0, offered.stderr
    assert offered.stdout.splitlines() == [
        f"adopted {best_id} into the new branch try-best at {best[:12]}: "
        + offered.stdout.splitlines()[0].split(": ", 1)[1],
        "main is unchanged: `git merge try-best` brings it in",
    ]
    assert git(project, "rev-parse", "try-best") == best and git(project, "rev-parse", "HEAD") == user
    taken = assay("adopt", "best", "--branch", "try-best", cwd=project)
    assert taken.returncode == 2 and "a branch 'try-best' exists already" in taken.stderr
    bad = assay("adopt", "best", "--branch", "no..dots", cwd=project)
    assert bad.returncode == 2 and "is not a name git takes for a branch" in bad.stderr
