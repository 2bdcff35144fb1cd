"""Adoption: bring a candidate commit into a user branch by fast-forward or merge commit, atomically.

The user's branch moves in one step at the end, so a kill at any earlier point leaves it and its work tree
as they were. A merge commit is built in a temporary work tree detached at the branch head (a conflict
fails there); then a branch that is not checked out moves by ``git update-ref`` with the old value as a
compare-and-swap, and a checked-out one by ``git merge --ff-only`` to the new commit in its own tree, which
never holds ``MERGE_HEAD`` or a half-made merge. The adopt marker (:mod:`assay.history.adoptmark`) keeps two
adopts apart and tells the next adopt what a killed one was doing; :mod:`assay.history.recover` cleans up
after it, and says why git's lock files are reported, never deleted.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from assay.faults import fault_point
from assay.history.adoptmark import AdoptMarker, marker_path
from assay.history.gitrun import GitError
from assay.history.recover import ADOPT_MESSAGE, recover
from assay.history.worktree import changed_entries, list_worktrees, remove_worktree

if TYPE_CHECKING:
    from assay.history.git import Git

MergeKind = Literal["fast-forward", "merge", "up-to-date"]


class MergeConflict(GitError):
    """The merge of a candidate into a branch conflicts; nothing was changed. ``files``: the conflicting ones."""

    def __init__(self, message: str, files: Sequence[str]) -> None:
        super().__init__(message)
        self.files = list(files)


def _is_ancestor(git: Git, older: str, newer: str) -> bool:
    proc = git.run("merge-base", "--is-ancestor", older, newer, ok_codes=(0, 1))
    return proc.returncode == 0


def _refuse_dirty(git: Git, branch: str, tree: Path, ignore: Sequence[str], target: str) -> None:
    """Refuse a changed tracked file, and an untracked one the adopted commit holds (the move would overwrite
    it); other untracked files (a log, notes) stay where they are, untouched."""
    entries = changed_entries(git, tree, ignore)
    held = set(git.run("ls-tree", "-r", "--name-only", "-z", target).stdout.split("\0"))
    dirty = [e.path for e in entries if not e.untracked or e.path in held]
    if dirty:
        more = f" and {len(dirty) - 1} more" if len(dirty) > 1 else ""
        raise GitError(
            f"git merge into {branch}: refusing, {tree} has uncommitted changes "
            f"({dirty[0]}{more}); commit or stash them first"
        )


def _merge_in(git: Git, tree: Path, branch: str, target: str, message: str) -> str:
    """Merge ``target`` into what the temporary ``tree`` has checked out; the merge commit. On conflict abort
    and raise."""
    args = ["merge", "-q", "--no-ff", "--no-edit", "-m", message, target]
    proc = git.run(*args, cwd=tree, ok_codes=(0, 1), commits=True)
    if proc.returncode == 0:
        return git.run("rev-parse", "HEAD", cwd=tree).stdout.strip()
    unmerged = git.run("diff", "--name-only", "--diff-filter=U", cwd=tree).stdout.split()
    git.run("merge", "--abort", cwd=tree, ok_codes=(0, 1, 128))
    raise MergeConflict(
        f"git merge {target[:12]} into {branch} failed: conflicts in {conflicting(unmerged)}; nothing was changed",
        unmerged,
    )


def conflicting(files: Sequence[str]) -> str:
    """The conflicting files, five at most: ``a.py, b.py and 3 more``."""
    shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
    return shown or "the work tree"


def _move(git: Git, marker: AdoptMarker, ref: str, tree: Path | None, old: str, new: str, note: str) -> None:
    """Move the branch ``ref`` from ``old`` to ``new`` (a descendant), with its checked-out ``tree`` if any."""
    marker.record("moving", old=old, merged=new)
    fault_point("adopt:before-ref-update")
    if tree is None:
        git.run("update-ref", "-m", note, ref, new, old)
    else:
        git.run("merge", "-q", "--ff-only", new, cwd=tree)


def _adopt(
    git: Git, marker: AdoptMarker, branch: str, target: str, tree: Path | None, message: str | None
) -> MergeKind:
    ref = f"refs/heads/{branch}"
    head = git.rev_parse(ref)
    if _is_ancestor(git, target, head):
        return "up-to-date"
    note = f"{ADOPT_MESSAGE} {target[:12]} into {branch}"
    if _is_ancestor(git, head, target):
        _move(git, marker, ref, tree, head, target, note)
        return "fast-forward"
    scratch = Path(tempfile.mkdtemp(prefix="assay-merge-"))
    marker.record("merging", scratch=str(scratch))
    try:
        git.add_worktree(scratch / "tree", head)
        merged = _merge_in(git, scratch / "tree", branch, target, message or note)
        _move(git, marker, ref, tree, head, merged, note)
    finally:
        remove_worktree(git, scratch / "tree")
        shutil.rmtree(scratch, ignore_errors=True)
    return "merge"


def merge_into(
    git: Git,
    branch: str,
    commit: str,
    *,
    message: str | None = None,
    ignore: Sequence[str] = (".assay",),
    notify: Callable[[str], None] | None = None,
) -> MergeKind:
    """Adopt ``commit`` into local ``branch`` (see :meth:`Git.merge_into`). ``ignore`` lists paths (the run
    data directory) whose untracked changes do not count as a dirty checked-out tree; ``notify`` gets one
    line for each thing cleaned up after an earlier adopt that was killed."""
    if not git.branch_exists(branch):
        raise GitError(f"git merge: there is no branch {branch!r} in {git.root}")
    target = git.rev_parse(commit)
    tree = next((path for path, name in list_worktrees(git).items() if name == branch), None)
    with AdoptMarker(marker_path(git)) as marker:
        for line in recover(git, marker.previous, branch, tree, ignore):
            if notify is not None:
                notify(line)
        if tree is not None:
            _refuse_dirty(git, branch, tree, ignore, target)
        marker.record("merging", branch=branch, tree=None if tree is None else str(tree))
        return _adopt(git, marker, branch, target, tree, message)
