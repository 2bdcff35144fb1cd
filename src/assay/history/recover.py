"""Before an adopt: clean up after an earlier one that was killed; refuse what is not assay's to touch.

- The temporary merge work tree of a killed adopt (named by the adopt marker) is removed.
- Git lock files (``index.lock``, ``HEAD.lock``, ``ORIG_HEAD.lock`` of the checked-out tree, the branch's
  ``refs/heads/<branch>.lock``) are never deleted: the adopt is refused with one line naming the file and how
  to delete it by hand. A dead assay process does not prove a lock is its own: a git command started since
  (a ``git commit`` waiting in its editor holds ``index.lock``) may own it, and deleting a live lock lets two
  writers corrupt the index. Adopt builds its merge elsewhere and moves the user's branch with one
  ``git merge --ff-only``, so only a kill inside that last command can leave one.
- ``MERGE_HEAD`` in the checked-out tree whose ``MERGE_MSG`` starts with ``assay: adopt`` was left by an adopt
  of an older assay, which merged in the user's tree, killed mid-merge: it is aborted (``git merge --abort``)
  and one line says so. Any other ``MERGE_HEAD`` is the user's own merge: refused, untouched.
- A tree that a killed adopt left half-moved (it died in its ``moving`` step with the branch still at ``old``,
  and every changed path holds exactly its content at ``merged``) is put back to ``old``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from assay.history.adoptmark import AdoptStep
from assay.history.gitrun import GitError
from assay.history.worktree import dirty_paths, list_worktrees, remove_worktree, restore_paths

if TYPE_CHECKING:
    from assay.history.git import Git

ADOPT_MESSAGE = "assay: adopt"
TREE_LOCKS = ("index.lock", "HEAD.lock", "ORIG_HEAD.lock")


def _git_paths(git: Git, cwd: Path, names: Sequence[str]) -> list[Path]:
    """``git rev-parse --git-path`` of each name, as seen from the work tree ``cwd``, made absolute."""
    args = [arg for name in names for arg in ("--git-path", name)]
    lines = git.run("rev-parse", *args, cwd=cwd).stdout.splitlines()
    return [cwd / line for line in lines]  # an absolute line stays as it is


def _refuse_locks(git: Git, branch: str, tree: Path | None, previous: AdoptStep | None) -> None:
    names = [f"refs/heads/{branch}.lock", *(TREE_LOCKS if tree is not None else ())]
    for lock in _git_paths(git, tree or git.root, names):
        if not (lock.exists() or lock.is_symlink()):
            continue
        killed = ""
        if previous is not None and previous.branch == branch:
            killed = f"; an assay adopt ({previous.holder()}) was interrupted while adopting into {branch}"
        raise GitError(
            f"git merge into {branch}: refusing, {lock} exists (a git command is running, or one was killed"
            f"{killed}); if no git command is running, delete it (rm '{lock}') and adopt again"
        )


def _clean_merge(git: Git, branch: str, tree: Path) -> str | None:
    """Abort a merge an older assay adopt left in ``tree``; refuse any other merge in progress."""
    merge_head, merge_msg = _git_paths(git, tree, ["MERGE_HEAD", "MERGE_MSG"])
    if not merge_head.exists():
        return None
    sha = merge_head.read_text(errors="replace").strip()[:12]
    try:
        message = merge_msg.read_text(errors="replace")
    except OSError:
        message = ""
    if not message.startswith(ADOPT_MESSAGE):
        raise GitError(
            f"git merge into {branch}: refusing, {tree} is in the middle of a merge (MERGE_HEAD {sha}) that "
            "assay did not start; finish it (git commit) or abort it (git merge --abort) first"
        )
    git.run("merge", "--abort", cwd=tree)
    return f"aborted the merge an interrupted assay adopt left in {tree} (MERGE_HEAD {sha})"


def _same_as(git: Git, tree: Path, commit: str, path: str) -> bool:
    """Whether ``path`` in the work tree ``tree`` is exactly as at ``commit`` (absent when it is absent there)."""
    entry = git.run("--literal-pathspecs", "ls-tree", "-z", commit, "--", path, cwd=tree).stdout
    file = tree / path
    if not entry:
        return not (file.exists() or file.is_symlink())
    mode, kind, sha = entry.partition("\t")[0].split()
    if kind != "blob" or mode == "120000" or file.is_symlink() or not file.is_file():
        return False
    return git.run("hash-object", "--", path, cwd=tree).stdout.strip() == sha


def _put_back(git: Git, previous: AdoptStep, tree: Path, ignore: Sequence[str]) -> int:
    """Put back the paths a killed ``moving`` step had already moved to ``merged`` in ``tree``; how many."""
    old, merged = previous.old, previous.merged
    if old is None or merged is None or git.rev_parse(f"refs/heads/{previous.branch}") != old:
        return 0
    dirty = dirty_paths(git, tree, ignore)
    if not dirty:
        return 0
    try:
        changed = set(git.changed_files(old, merged))
        moved = set(dirty) <= changed and all(_same_as(git, tree, merged, p) for p in dirty)
    except GitError:  # the merged commit is gone (gc): the changes cannot be told from the user's
        return 0
    if not moved:
        return 0
    restore_paths(git, tree, old, dirty)
    return len(dirty)


def _remove_scratch(git: Git, scratch: str | None) -> None:
    if scratch:
        remove_worktree(git, Path(scratch) / "tree")
        # Empty once the work tree is gone: a path read from a file is never deleted recursively.
        with contextlib.suppress(OSError):
            Path(scratch).rmdir()


def _moved_tree(git: Git, previous: AdoptStep) -> Path | None:
    """The work tree a killed ``moving`` step was updating, if it still has that branch checked out."""
    if previous.step != "moving" or previous.tree is None:
        return None
    tree = Path(previous.tree)
    return tree if list_worktrees(git).get(tree) == previous.branch else None


def recover(
    git: Git, previous: AdoptStep | None, branch: str, tree: Path | None, ignore: Sequence[str]
) -> list[str]:
    """Make the repository ready to adopt into ``branch`` (checked out in ``tree``, or None) after whatever
    ``previous`` (the step a killed adopt was in, or None) left; one line per thing done, for the user.
    Raises :class:`GitError` (one line) for a lock file or a merge that is not assay's to remove."""
    if previous is not None:
        _remove_scratch(git, previous.scratch)
    _refuse_locks(git, branch, tree, previous)
    notes = []
    aborted = _clean_merge(git, branch, tree) if tree is not None else None
    if aborted:
        notes.append(aborted)
    if previous is None:
        return notes
    moved = _moved_tree(git, previous)
    count = _put_back(git, previous, moved, ignore) if moved is not None else 0
    if count:
        notes.append(
            f"an assay adopt ({previous.holder()}) was interrupted while moving {previous.branch}: "
            f"put back {count} file{'s' if count != 1 else ''} it had half-updated in {moved}"
        )
    elif not notes:
        notes.append(
            f"an earlier assay adopt ({previous.holder()}) was interrupted before it finished; cleaned up after it"
        )
    return notes
