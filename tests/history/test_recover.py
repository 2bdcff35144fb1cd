"""What an earlier adopt left is cleaned up, one line each; what is not assay's (the user's merge, git's lock
files, the user's edits) is refused and left exactly as it was."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from assay.history import Git, GitError
from assay.history.adoptmark import AdoptBusy, marker_path

from .conftest import adopt_killed, candidate, commit_as_user, git_path, sh, write

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_user_git_config")]

ADOPT = "assay: adopt cand-0001 of run r1"
AS_USER = ("-c", "user.name=u", "-c", "user.email=u@x")


def merge_state(root: Path) -> tuple[str, str, str, str]:
    """HEAD, MERGE_HEAD, MERGE_MSG and the staged paths of a merge in progress."""
    merge_msg = git_path(root, "MERGE_MSG").read_text()
    staged = sh(root, "diff", "--cached", "--name-only")
    return sh(root, "rev-parse", "HEAD"), sh(root, "rev-parse", "MERGE_HEAD"), merge_msg, staged


def test_a_merge_an_older_adopt_left_mid_way_is_aborted_with_one_line(repo: Git, tmp_path: Path) -> None:
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "better\n"})
    user = commit_as_user(repo.root, "README.md", "user work\n")
    sh(
        repo.root, *AS_USER, "merge", "-q", "--no-ff", "--no-commit", "-m", ADOPT, cand
    )  # as an older assay did it
    assert git_path(repo.root, "MERGE_HEAD").exists()
    notes: list[str] = []
    assert repo.merge_into("main", cand, notify=notes.append) == "merge"
    assert notes == [
        f"aborted the merge an interrupted assay adopt left in {repo.root} (MERGE_HEAD {cand[:12]})"
    ]
    assert not git_path(repo.root, "MERGE_HEAD").exists()
    assert repo.log("HEAD", 1)[0].parents == (user, cand)
    assert sh(repo.root, "status", "--porcelain") == ""


def test_an_older_adopt_killed_after_its_commit_is_finished_not_left_mid_merge(
    repo: Git, tmp_path: Path
) -> None:
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "better\n"})
    commit_as_user(repo.root, "README.md", "user work\n")
    sh(repo.root, *AS_USER, "merge", "-q", "--no-ff", "-m", ADOPT, cand)
    merged = repo.head()
    # Killed between making the merge commit and removing MERGE_HEAD: the tree is clean, the merge is not over.
    git_path(repo.root, "MERGE_HEAD").write_text(cand + "\n")
    git_path(repo.root, "MERGE_MSG").write_text(ADOPT + "\n")
    assert "still merging" in sh(repo.root, "status")
    notes: list[str] = []
    assert repo.merge_into("main", cand, notify=notes.append) == "up-to-date"
    assert len(notes) == 1 and notes[0].startswith("aborted the merge an interrupted assay adopt left")
    assert repo.head() == merged and not git_path(repo.root, "MERGE_HEAD").exists()
    assert "merging" not in sh(repo.root, "status") and sh(repo.root, "status", "--porcelain") == ""


def test_the_users_own_merge_in_progress_is_refused_and_left_alone(repo: Git, tmp_path: Path) -> None:
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "better\n"})
    sh(repo.root, "switch", "-q", "-c", "side")
    commit_as_user(repo.root, "side.txt", "side\n")
    sh(repo.root, "switch", "-q", "main")
    commit_as_user(repo.root, "README.md", "user work\n")
    sh(repo.root, *AS_USER, "merge", "-q", "--no-ff", "--no-commit", "side")
    before = merge_state(repo.root)
    with pytest.raises(
        GitError, match=r"in the middle of a merge \(MERGE_HEAD \w{12}\) that assay did not start"
    ):
        repo.merge_into("main", cand)
    assert merge_state(repo.root) == before
    assert before[3] == "side.txt" and before[2].startswith("Merge branch 'side'")


def test_git_lock_files_are_named_and_never_deleted(repo: Git, tmp_path: Path) -> None:
    base = repo.head()
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "better\n"})
    sh(repo.root, "branch", "feature", base)
    locks = {"main": ["index.lock", "HEAD.lock", "ORIG_HEAD.lock", "refs/heads/main.lock"]}
    locks["feature"] = ["refs/heads/feature.lock"]
    for branch, names in locks.items():
        for name in names:
            lock = write(git_path(repo.root, name), "")
            with pytest.raises(GitError) as info:
                repo.merge_into(branch, cand)
            message = str(info.value)
            assert (
                f"{lock} exists" in message and f"delete it (rm '{lock}')" in message and "\n" not in message
            )
            assert "assay adopt (pid" not in message
            assert lock.exists() and repo.head() == base and repo.rev_parse("feature") == base
            lock.unlink()

    adopt_killed(repo.root, "main", cand)
    sh(repo.root, "read-tree", "-m", "-u", "HEAD", cand)  # killed inside its fast-forward, as below
    lock = write(git_path(repo.root, "index.lock"), "")
    killed = r"an assay adopt \(pid \d+ on .*\) was interrupted while adopting into main"
    for _ in range(2):  # a refused adopt leaves what the killed one was doing for the next
        with pytest.raises(GitError, match=killed):
            repo.merge_into("main", cand)
        assert lock.exists() and repo.head() == base
    lock.unlink()  # what the message tells the user to do
    notes: list[str] = []
    assert repo.merge_into("main", cand, notify=notes.append) == "fast-forward" and repo.head() == cand
    assert len(notes) == 1 and "put back 1 file it had half-updated" in notes[0]


@pytest.mark.parametrize("left", ["index and files", "one file"])
def test_a_tree_half_moved_by_a_killed_adopt_is_put_back_and_adopted(
    repo: Git, tmp_path: Path, left: str
) -> None:
    base = repo.head()
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "better\n", "new.txt": "new\n"})
    adopt_killed(repo.root, "main", cand)
    # As if the last step (git merge --ff-only) had been killed after updating the tree, before the branch.
    if left == "index and files":
        sh(repo.root, "read-tree", "-m", "-u", "HEAD", cand)
    else:
        write(repo.root / "prompt.md", "better\n")
    notes: list[str] = []
    assert repo.merge_into("main", cand, notify=notes.append) == "fast-forward"
    count = "2 files" if left == "index and files" else "1 file"
    [note] = notes
    assert f"was interrupted while moving main: put back {count} it had half-updated in {repo.root}" in note
    assert repo.head() == cand and sh(repo.root, "status", "--porcelain") == ""
    assert (repo.root / "new.txt").read_text() == "new\n" and repo.log("HEAD", 2)[1].sha == base


def test_a_half_moved_tree_the_user_edited_since_is_refused_untouched(repo: Git, tmp_path: Path) -> None:
    base = repo.head()
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "better\n", "new.txt": "new\n"})
    adopt_killed(repo.root, "main", cand)
    write(repo.root / "new.txt", "new\n")  # as the killed adopt left it
    write(repo.root / "prompt.md", "the user's own edit\n")  # not what the adopt writes: the user's
    with pytest.raises(GitError, match=r"uncommitted changes \(\S+ and 1 more\)"):
        repo.merge_into("main", cand)
    assert (repo.root / "prompt.md").read_text() == "the user's own edit\n"
    assert (repo.root / "new.txt").read_text() == "new\n" and repo.head() == base


def test_a_second_adopt_while_one_runs_is_refused(repo: Git, tmp_path: Path) -> None:
    base = repo.head()
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "better\n"})
    path = marker_path(repo)
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a live adopt holds it
        with pytest.raises(AdoptBusy, match="another adopt is running in this repository"):
            repo.merge_into("main", cand)
        assert repo.head() == base
    finally:
        os.close(fd)
    notes: list[str] = []
    assert repo.merge_into("main", cand, notify=notes.append) == "fast-forward" and notes == []
