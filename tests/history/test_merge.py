"""Adopt is atomic: the merge is built in a temporary work tree, the user's branch moves in one step at the
end, and a process killed before that leaves the branch and its work tree exactly as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.history import Git, GitError

from .conftest import adopt_killed, candidate, commit_as_user, git_path, sh, write

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_user_git_config")]


def assert_untouched(repo: Git, head: str) -> None:
    """The checked-out branch is at ``head``, its tree clean, no merge in progress."""
    assert repo.head() == head
    assert sh(repo.root, "status", "--porcelain", "--untracked-files=all") == ""
    assert not git_path(repo.root, "MERGE_HEAD").exists()
    assert "merging" not in sh(repo.root, "status")


def test_a_merge_killed_before_the_branch_moves_leaves_the_user_tree_as_it_was(
    repo: Git, tmp_path: Path
) -> None:
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "better\n"})
    user = commit_as_user(repo.root, "README.md", "user work\n")
    adopt_killed(repo.root, "main", cand)
    assert_untouched(repo, user)
    assert (repo.root / "prompt.md").read_text() == "be brief\nbe kind\n"
    # It died with its merge built in a tree of its own, which the next adopt removes.
    assert [p for p in repo.worktrees() if "assay-merge-" in str(p)]

    notes: list[str] = []
    assert repo.merge_into("main", cand, notify=notes.append) == "merge"
    [note] = notes
    assert "assay adopt (pid" in note and "was interrupted before it finished" in note and "\n" not in note
    merged = repo.log("HEAD", 1)[0]
    assert merged.parents == (user, cand) and merged.subject.startswith("assay: adopt")
    assert (repo.root / "prompt.md").read_text() == "better\n"
    assert_untouched(repo, merged.sha)
    assert list(repo.worktrees()) == [repo.root, (tmp_path / "wt").resolve()]
    assert repo.merge_into("main", cand, notify=notes.append) == "up-to-date"
    assert len(notes) == 1  # that adopt finished: nothing to say the next time


def test_a_fast_forward_killed_before_the_branch_moves_changes_nothing(repo: Git, tmp_path: Path) -> None:
    base = repo.head()
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "better\n"})
    adopt_killed(repo.root, "main", cand)
    assert_untouched(repo, base)
    assert repo.merge_into("main", cand) == "fast-forward"
    assert_untouched(repo, cand)

    sh(repo.root, "branch", "feature", base)  # a branch that is not checked out moves by update-ref
    adopt_killed(repo.root, "feature", cand)
    assert repo.rev_parse("feature") == base
    assert repo.merge_into("feature", cand) == "fast-forward"
    assert repo.rev_parse("feature") == cand


def test_a_conflict_fails_in_the_temporary_tree_and_leaves_nothing_behind(repo: Git, tmp_path: Path) -> None:
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "candidate\n"})
    user = commit_as_user(repo.root, "prompt.md", "user's own\n")
    for _ in range(2):
        notes: list[str] = []
        with pytest.raises(GitError, match=r"conflicts in prompt\.md; nothing was changed") as info:
            repo.merge_into("main", cand, notify=notes.append)
        assert "\n" not in str(info.value)
        assert notes == []  # the failed adopt cleaned up after itself: the next one finds nothing to do
        assert_untouched(repo, user)
        assert (repo.root / "prompt.md").read_text() == "user's own\n"
        assert list(repo.worktrees()) == [repo.root, (tmp_path / "wt").resolve()]


def test_an_untracked_file_blocks_an_adopt_only_when_the_candidate_holds_it(
    repo: Git, tmp_path: Path
) -> None:
    base = repo.head()
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "better\n", "helper.py": "x = 1\n"})
    write(repo.root / "notes.txt", "the user's scratch\n")
    write(repo.root / "helper.py", "the user's own helper\n")
    with pytest.raises(GitError, match=r"uncommitted changes \(helper\.py\)"):
        repo.merge_into("main", cand)
    assert repo.head() == base and (repo.root / "helper.py").read_text() == "the user's own helper\n"
    (repo.root / "helper.py").unlink()
    assert repo.merge_into("main", cand) == "fast-forward"
    assert repo.head() == cand and (repo.root / "prompt.md").read_text() == "better\n"
    assert (repo.root / "notes.txt").read_text() == "the user's scratch\n"
    assert sh(repo.root, "status", "--porcelain") == "?? notes.txt"
