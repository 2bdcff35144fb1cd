"""Adoption: bring a candidate commit into a user branch by fast-forward or merge commit."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from assay.history.gitrun import GitError
from assay.history.worktree import dirty_paths, list_worktrees

if TYPE_CHECKING:
    from assay.history.git import Git

MergeKind = Literal["fast-forward", "merge", "up-to-date"]


def _is_ancestor(git: Git, older: str, newer: str) -> bool:
    proc = git.run("merge-base", "--is-ancestor", older, newer, ok_codes=(0, 1))
    return proc.returncode == 0


def _merge_in(git: Git, tree: Path, branch: str, target: str, message: str) -> None:
    """Merge ``target`` into the branch checked out in ``tree``; on conflict abort and raise."""
    args = ["merge", "-q", "--no-ff", "--no-edit", "-m", message, target]
    proc = git.run(*args, cwd=tree, ok_codes=(0, 1), commits=True)
    if proc.returncode == 0:
        return
    unmerged = git.run("diff", "--name-only", "--diff-filter=U", cwd=tree).stdout.split()
    git.run("merge", "--abort", cwd=tree, ok_codes=(0, 1, 128))
    files = ", ".join(unmerged[:5]) + (f" and {len(unmerged) - 5} more" if len(unmerged) > 5 else "")
    raise GitError(
        f"git merge {target[:12]} into {branch} failed: conflicts in {files or 'the work tree'}; "
        "nothing was changed (resolve by hand, or adopt into a new branch)"
    )


def merge_into(
    git: Git, branch: str, commit: str, *, message: str | None = None, ignore: Sequence[str] = (".assay",)
) -> MergeKind:
    """Adopt ``commit`` into local ``branch`` (see :meth:`Git.merge_into`). ``ignore`` lists paths (the run
    data directory) whose untracked changes do not count as a dirty checked-out tree."""
    if not git.branch_exists(branch):
        raise GitError(f"git merge: there is no branch {branch!r} in {git.root}")
    ref = f"refs/heads/{branch}"
    head = git.rev_parse(ref)
    target = git.rev_parse(commit)
    checked_out = next((path for path, name in list_worktrees(git).items() if name == branch), None)
    if checked_out is not None:
        dirty = dirty_paths(git, checked_out, ignore)
        if dirty:
            more = f" and {len(dirty) - 1} more" if len(dirty) > 1 else ""
            raise GitError(
                f"git merge into {branch}: refusing, {checked_out} has uncommitted changes "
                f"({dirty[0]}{more}); commit or stash them first"
            )
    if _is_ancestor(git, target, head):
        return "up-to-date"
    note = f"assay: adopt {target[:12]} into {branch}"
    if _is_ancestor(git, head, target):
        if checked_out is not None:
            git.run("merge", "-q", "--ff-only", target, cwd=checked_out)
        else:
            git.run("update-ref", "-m", note, ref, target, head)
        return "fast-forward"
    if checked_out is not None:
        _merge_in(git, checked_out, branch, target, message or note)
        return "merge"
    scratch = Path(tempfile.mkdtemp(prefix="assay-merge-"))
    tree = scratch / "tree"
    try:
        git.add_worktree(tree, head)
        _merge_in(git, tree, branch, target, message or note)
        merged = git.run("rev-parse", "HEAD", cwd=tree).stdout.strip()
    finally:
        git.remove_worktree(tree)
        shutil.rmtree(scratch, ignore_errors=True)
    git.run("update-ref", "-m", note, ref, merged, head)
    return "merge"
