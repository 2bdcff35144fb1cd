"""Git as the memory of a run: real repositories in tmp_path, checked with independent git calls."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from assay.history import Git, GitError

from .conftest import candidate, sh, write

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_user_git_config")]


def test_init_commits_files_respecting_gitignore_and_discover_finds_the_root(
    repo: Git, tmp_path: Path
) -> None:
    assert repo.current_branch() == "main"
    head = repo.head()
    assert len(head) == 40 and sh(repo.root, "rev-parse", "HEAD") == head
    assert sorted(sh(repo.root, "ls-tree", "-r", "--name-only", "HEAD").split()) == [
        ".gitignore",
        "prompt.md",
        "src/a.py",
    ]
    [entry] = repo.log("HEAD")
    assert (entry.sha, entry.parents, entry.subject) == (head, (), "assay: initial commit")
    assert sh(repo.root, "log", "-1", "--format=%an <%ae>|%cn <%ce>") == (
        "assay <assay@localhost>|assay <assay@localhost>"
    )
    found = Git.discover(repo.root / "src" / "not-yet" / "file.py")
    assert found is not None and found.root == repo.root
    assert Git.discover(tmp_path) is None
    assert Git.discover(repo.root / ".git") is None


def test_discover_outside_any_repository_starts_no_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import assay.history.git as git_module

    def no_git(*args: object, **kwargs: object) -> None:
        raise AssertionError("git was started")

    monkeypatch.setattr(git_module, "run_git", no_git)
    assert Git.discover(tmp_path / "a" / "b.txt") is None  # nothing named .git at or above it
    (tmp_path / ".git").mkdir()
    with pytest.raises(AssertionError, match="git was started"):
        Git.discover(tmp_path / "a" / "b.txt")  # something is: git decides


def test_init_of_an_empty_directory_still_has_a_head(tmp_path: Path) -> None:
    git = Git.init(tmp_path / "empty")
    assert git.log(git.head())[0].subject == "assay: initial commit"
    assert Git.init(tmp_path / "bare", initial_commit=False).current_branch() == "main"
    with pytest.raises(GitError, match="already a git repository"):
        Git.init(tmp_path / "empty")
    assert len(git.log("HEAD")) == 1


def test_user_identity_from_git_config_wins_over_the_fallback(repo: Git, tmp_path: Path) -> None:
    sh(repo.root, "config", "user.name", "Ada")
    sh(repo.root, "config", "user.email", "ada@example.org")
    sha = candidate(Git(repo.root), tmp_path / "wt", {"prompt.md": "be brief\n"})
    assert sh(repo.root, "log", "-1", "--format=%an <%ae>", sha) == "Ada <ada@example.org>"


def test_dirty_detection_counts_modified_and_untracked_but_not_the_run_dir(repo: Git) -> None:
    assert not repo.is_dirty()
    write(repo.root / ".assay" / "runs" / "r1" / "events.ndjson", "{}\n")
    write(repo.root / "more.log", "ignored\n")
    assert not repo.is_dirty(ignore=(".assay",))
    write(repo.root / "prompt.md", "changed\n")
    assert repo.dirty_paths() == ["prompt.md"]
    sh(repo.root, "checkout", "--", "prompt.md")
    write(repo.root / "notes" / "new.txt", "untracked\n")
    assert repo.dirty_paths() == ["notes/new.txt"]
    assert not repo.is_dirty(ignore=("notes/", str(repo.root / ".assay")))
    (repo.root / "notes" / "new.txt").unlink()
    (repo.root / "src" / "a.py").unlink()
    assert repo.is_dirty()


def test_commit_paths_commits_those_paths_only_and_says_which_files_a_commit_holds(repo: Git) -> None:
    assert repo.commit_files(repo.head()) == [".gitignore", "prompt.md", "src/a.py"]  # a root commit: all
    write(repo.root / "assay.yaml", "artifact: {}\n")
    write(repo.root / "notes.txt", "the user's, untracked\n")
    write(repo.root / "src" / "a.py", "x = 2\n")
    sh(repo.root, "add", "src/a.py")  # staged by the user: not assay's to commit
    assert repo.commit_paths([], "nothing") is None
    sha = repo.commit_paths(["assay.yaml"], "assay: start (assay.yaml)")
    assert sha == repo.head() and repo.commit_files(sha) == ["assay.yaml"]
    assert sh(repo.root, "status", "--porcelain") == "M  src/a.py\n?? notes.txt"
    assert repo.commit_paths(["assay.yaml"], "again") is None and repo.head() == sha
    assert [e.path for e in repo.status()] == ["src/a.py", "notes.txt"]


def test_exclude_locally_keeps_run_data_out_of_status_without_a_tracked_change(
    repo: Git, tmp_path: Path
) -> None:
    data = repo.root / "run data[1]"
    write(data / "assay.db", "x")
    assert repo.exclude_locally(data) == "run data[1]/"
    assert sh(repo.root, "status", "--porcelain") == ""
    assert sh(repo.root, "status", "--porcelain", "--ignored").endswith('!! "run data[1]/"')
    assert repo.exclude_locally(data) is None  # ignored already: listed once
    assert repo.exclude_locally(repo.root / ".assay") is None  # the project's .gitignore has it
    assert repo.exclude_locally(tmp_path / "elsewhere") is None
    assert (repo.root / ".git" / "info" / "exclude").read_text().count("run data") == 1


def test_worktree_commit_and_remove_leave_the_user_branch_alone(repo: Git, tmp_path: Path) -> None:
    base = repo.head()
    wt = tmp_path / "runs" / "wt-1"
    repo.add_worktree(wt, base)
    assert (wt / "prompt.md").read_text() == "be brief\nbe kind\n"
    assert repo.commit_all(wt, "gen 1: nothing") is None
    write(wt / "prompt.md", "be brief\n")
    sha = repo.commit_all(wt, "gen 1 surface: drop a line\n\ndetails")
    assert sha is not None and sha != base
    [entry] = repo.log(sha, max_count=1)
    assert entry.parents == (base,) and entry.subject == "gen 1 surface: drop a line"
    assert repo.head() == base and repo.current_branch() == "main"
    assert (repo.root / "prompt.md").read_text() == "be brief\nbe kind\n"
    assert wt.resolve() in repo.worktrees() and repo.worktrees()[wt.resolve()] is None
    repo.remove_worktree(wt)
    assert not wt.exists()
    assert list(repo.worktrees()) == [repo.root]
    assert repo.rev_parse(sha) == sha


def test_remove_worktree_tolerates_half_deleted_ones_and_refuses_foreign_dirs(
    repo: Git, tmp_path: Path
) -> None:
    gone, broken = tmp_path / "gone", tmp_path / "broken"
    repo.add_worktree(gone, "HEAD")
    repo.add_worktree(broken, "HEAD")
    subprocess.run(["rm", "-rf", str(gone)], check=True)
    (broken / ".git").unlink()
    repo.remove_worktree(gone)
    repo.remove_worktree(broken)
    repo.remove_worktree(tmp_path / "never-existed")
    assert not broken.exists() and list(repo.worktrees()) == [repo.root]
    repo.add_worktree(gone, "HEAD")
    assert (gone / "src" / "a.py").is_file()
    foreign = write(tmp_path / "mine" / "keep.txt", "precious\n")
    with pytest.raises(GitError, match="refusing"):
        repo.remove_worktree(foreign.parent)
    with pytest.raises(GitError, match="main work tree"):
        repo.remove_worktree(repo.root)
    assert foreign.read_text() == "precious\n"


def test_reset_worktree_restores_the_commit_and_deletes_untracked_and_ignored(
    repo: Git, tmp_path: Path
) -> None:
    wt = tmp_path / "wt"
    sha = candidate(repo, wt, {"prompt.md": "v2\n"})
    write(wt / "src" / "a.py", "x = 2\n")
    write(wt / "build" / "out.log", "ignored\n")
    write(wt / "stray.txt", "untracked\n")
    repo.reset_worktree(wt, repo.head())
    assert (wt / "prompt.md").read_text() == "be brief\nbe kind\n"
    assert (wt / "src" / "a.py").read_text() == "x = 1\n"
    assert not (wt / "build").exists() and not (wt / "stray.txt").exists()
    assert sh(wt, "rev-parse", "HEAD") == repo.head() != sha


def test_branches_and_refs_move_without_touching_the_checked_out_branch(repo: Git, tmp_path: Path) -> None:
    base = repo.head()
    keep = candidate(repo, tmp_path / "wt", {"prompt.md": "kept\n"})
    repo.set_branch("assay/run1", base)
    assert repo.branch_exists("assay/run1") and not repo.branch_exists("assay/run2")
    repo.set_branch("assay/run1", keep)
    repo.set_ref("refs/assay/run1/cand-0001", keep)
    repo.set_ref("refs/assay/run1/cand-0002", base)
    repo.set_ref("refs/assay/run10/cand-0001", base)
    repo.set_branch("assay/run1", base)  # discard: the branch goes back, the candidate stays reachable
    assert repo.rev_parse("assay/run1") == base
    assert repo.refs("refs/assay/run1/") == {
        "refs/assay/run1/cand-0001": keep,
        "refs/assay/run1/cand-0002": base,
    }
    assert list(repo.refs("refs/assay/run1/cand-0001")) == ["refs/assay/run1/cand-0001"]
    assert repo.log("refs/assay/run1/cand-0001")[0].sha == keep
    assert repo.current_branch() == "main" and repo.head() == base
    assert (repo.root / "prompt.md").read_text() == "be brief\nbe kind\n" and not repo.is_dirty()
    with pytest.raises(GitError, match="main"):
        repo.set_branch("main", keep)
    with pytest.raises(GitError, match="refs/"):
        repo.set_ref("cand-0001", keep)
    repo.delete_ref("refs/assay/run1/cand-0001")
    repo.delete_ref("refs/assay/run1/cand-0001")
    repo.delete_ref("refs/heads/assay/run1")
    assert list(repo.refs("refs/assay/run1/")) == ["refs/assay/run1/cand-0002"]
    assert not repo.branch_exists("assay/run1") and repo.head() == base


def test_a_note_shows_under_the_commit_replaces_the_last_and_waits_for_a_locked_ref(
    repo: Git, tmp_path: Path
) -> None:
    commit = candidate(repo, tmp_path / "wt", {"prompt.md": "kept\n"})
    repo.set_note(commit, "reason: discard: no gain\n")
    repo.set_note(commit, "reason: keep: dev score +0.016 (0.957 → 0.973)\n")
    shown = sh(repo.root, "log", "-1", commit)
    assert "Notes:\n    reason: keep: dev score +0.016 (0.957 → 0.973)" in shown and "no gain" not in shown
    lock = Path(sh(repo.root, "rev-parse", "--git-common-dir"))
    lock = (lock if lock.is_absolute() else repo.root / lock) / "refs" / "notes" / "commits.lock"
    lock.write_text("")  # another writer holds the notes ref
    with pytest.raises(GitError, match="notes"):
        repo.set_note(commit, "reason: never written\n", attempts=2)
    lock.unlink()
    assert sh(repo.root, "notes", "show", commit) == "reason: keep: dev score +0.016 (0.957 → 0.973)"


def test_restore_paths_reverts_modified_added_and_deleted_files(repo: Git, tmp_path: Path) -> None:
    parent = repo.head()
    wt = tmp_path / "wt"
    edits = {"prompt.md": "hacked\n", "src/a.py": None, "new/deep/c.txt": "added\n", ".gitignore": "*.tmp\n"}
    cand = candidate(repo, wt, edits)
    write(wt / "loose.txt", "never committed\n")
    repo.restore_paths(wt, parent, ["prompt.md", "src/a.py", "new/deep/c.txt", "loose.txt"])
    assert (wt / "prompt.md").read_text() == "be brief\nbe kind\n"
    assert (wt / "src" / "a.py").read_text() == "x = 1\n"
    assert not (wt / "new").exists() and not (wt / "loose.txt").exists()
    assert (wt / ".gitignore").read_text() == "*.tmp\n"
    fixed = repo.commit_all(wt, "gen 1: revert out-of-scope edits")
    assert fixed is not None and repo.log(fixed, 1)[0].parents == (cand,)
    assert repo.changed_files(parent, fixed) == [".gitignore"]
    with pytest.raises(GitError, match="inside the repository"):
        repo.restore_paths(wt, parent, ["../project/prompt.md"])


def test_changed_files_diff_stats_and_diff(repo: Git, tmp_path: Path) -> None:
    base = repo.head()
    wt = tmp_path / "wt"
    repo.add_worktree(wt, base)
    write(wt / "prompt.md", "be brief\nbe very kind\nthanks\n")
    write(wt / "notes.txt", "one\ntwo\nthree\n")
    (wt / "logo.bin").write_bytes(b"\x00\x01\x02binary")
    (wt / "src" / "a.py").rename(wt / "src" / "b.py")
    sha = repo.commit_all(wt, "gen 1")
    assert sha is not None
    assert repo.changed_files(base, sha) == ["logo.bin", "notes.txt", "prompt.md", "src/a.py", "src/b.py"]
    stats = repo.diff_stats(base, sha)
    assert (stats.files, stats.insertions, stats.deletions, stats.binary_files) == (4, 5, 1, 1)
    patch = repo.diff(base, sha, ["prompt.md"])
    assert "-be kind" in patch and "+be very kind" in patch and "notes.txt" not in patch
    assert repo.show_file(sha, "notes.txt") == "one\ntwo\nthree\n"
    assert repo.show_file(base, "notes.txt") is None


def test_merge_into_fast_forwards_the_checked_out_branch_and_its_files(repo: Git, tmp_path: Path) -> None:
    base = repo.head()
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "better\n"})
    write(repo.root / ".assay" / "runs" / "r1" / "results.tsv", "gen\n")
    assert repo.merge_into("main", cand) == "fast-forward"
    assert repo.head() == cand and repo.log("HEAD", 2)[1].sha == base
    assert (repo.root / "prompt.md").read_text() == "better\n" and not repo.is_dirty()
    assert repo.merge_into("main", cand) == "up-to-date"


def test_merge_into_makes_a_merge_commit_when_the_user_moved_on(repo: Git, tmp_path: Path) -> None:
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "better\n"})
    write(repo.root / "README.md", "user work\n")
    sh(repo.root, "add", "README.md")
    sh(repo.root, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "-m", "user commit")
    user = repo.head()
    assert repo.merge_into("main", cand) == "merge"
    merged = repo.log("HEAD", 1)[0]
    assert merged.parents == (user, cand) and merged.subject.startswith("assay: adopt")
    assert (repo.root / "prompt.md").read_text() == "better\n"
    assert (repo.root / "README.md").read_text() == "user work\n" and not repo.is_dirty()


def test_merge_into_a_branch_that_is_not_checked_out_uses_no_user_tree(repo: Git, tmp_path: Path) -> None:
    base = repo.head()
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "better\n"})
    sh(repo.root, "switch", "-q", "-c", "feature")
    write(repo.root / "feature.txt", "f\n")
    sh(repo.root, "add", "feature.txt")
    sh(repo.root, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "-m", "feature work")
    feature = repo.head()
    assert repo.merge_into("feature", cand, message="adopt gen 1") == "merge"
    assert repo.log("feature", 1)[0].parents == (feature, cand)
    assert repo.log("feature", 1)[0].subject == "adopt gen 1"
    sh(repo.root, "switch", "-q", "main")
    assert repo.merge_into("main", cand) == "fast-forward"
    assert (repo.root / "prompt.md").read_text() == "better\n"
    sh(repo.root, "switch", "-q", "feature")
    sh(repo.root, "branch", "-q", "-f", "main", base)
    assert repo.merge_into("main", repo.rev_parse("feature")) == "fast-forward"
    assert repo.rev_parse("main") == repo.head()
    assert not [p for p in repo.worktrees() if "assay-merge" in str(p)]


def test_merge_into_refuses_a_dirty_checked_out_tree_and_aborts_conflicts(repo: Git, tmp_path: Path) -> None:
    base = repo.head()
    cand = candidate(repo, tmp_path / "wt", {"prompt.md": "candidate\n"})
    write(repo.root / "prompt.md", "uncommitted user edit\n")
    with pytest.raises(GitError, match=r"uncommitted changes \(prompt.md\)") as info:
        repo.merge_into("main", cand)
    assert "\n" not in str(info.value)
    assert repo.head() == base and (repo.root / "prompt.md").read_text() == "uncommitted user edit\n"
    sh(repo.root, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "-am", "user edit")
    user = repo.head()
    with pytest.raises(GitError, match=r"conflicts in prompt\.md"):
        repo.merge_into("main", cand)
    assert repo.head() == user and not repo.is_dirty()
    with pytest.raises(GitError, match="no branch"):
        repo.merge_into("nope", cand)


def test_failures_are_one_line_git_errors_naming_the_command(repo: Git, tmp_path: Path) -> None:
    with pytest.raises(GitError) as info:
        repo.rev_parse("no-such-rev")
    assert "git rev-parse" in str(info.value) and "no-such-rev" in str(info.value)
    occupied = write(tmp_path / "occupied" / "file.txt", "x\n").parent
    with pytest.raises(GitError) as info:
        repo.add_worktree(occupied, "HEAD")
    message = str(info.value)
    assert message.startswith("git ") and "worktree add" in message and "already exists" in message
    assert "\n" not in message
    with pytest.raises(GitError, match="is not a commit"):
        repo.show_file("0" * 40, "prompt.md")
    with pytest.raises(GitError, match="does not exist"):
        repo.commit_all(tmp_path / "missing", "msg")
    with pytest.raises(GitError, match="unknown option") as info:
        repo.run("commit", "--no-such-option=two\nlines")
    assert "\n" not in str(info.value)
