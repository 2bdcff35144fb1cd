"""Work tree operations behind :class:`assay.history.git.Git`: dirty status, removal, restoring paths."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from assay.history.gitrun import GitError
from assay.history.treestatus import StatusEntry, parse_status, under

if TYPE_CHECKING:
    from assay.history.git import Git


def _relative_ignores(tree: Path, ignore: Sequence[str]) -> list[str]:
    out = []
    for item in ignore:
        path = Path(item)
        if path.is_absolute():
            try:
                item = path.resolve().relative_to(tree).as_posix()
            except ValueError:
                continue
        item = item.strip("/").removeprefix("./")
        if item and item != ".":
            out.append(item)
    return out


def status_entries(git: Git, tree: Path) -> list[StatusEntry]:
    """What ``git status`` reports in the work tree ``tree`` (every untracked file, not folders; no ignored one)."""
    return parse_status(git.run("status", "--porcelain=v1", "-z", "--untracked-files=all", cwd=tree).stdout)


def changed_entries(git: Git, tree: Path, ignore: Sequence[str]) -> list[StatusEntry]:
    """What ``git status`` reports in the work tree ``tree``, except the paths under ``ignore``."""
    skip = _relative_ignores(tree.resolve(), ignore)
    return [e for e in status_entries(git, tree) if not under(e.path, skip)]


def dirty_paths(git: Git, tree: Path, ignore: Sequence[str]) -> list[str]:
    """Changed or untracked paths of the work tree ``tree``, except those under ``ignore``."""
    return [e.path for e in changed_entries(git, tree, ignore)]


def list_worktrees(git: Git) -> dict[Path, str | None]:
    """Every work tree of the repository (the main one first): path -> checked-out branch, None if detached."""
    trees: dict[Path, str | None] = {}
    current: Path | None = None
    for line in git.run("worktree", "list", "--porcelain").stdout.splitlines():
        key, _, value = line.partition(" ")
        if key == "worktree":
            current = Path(value).resolve()
            trees[current] = None
        elif key == "branch" and current is not None:
            trees[current] = value.removeprefix("refs/heads/")
    return trees


def _belongs_to(git: Git, target: Path) -> bool:
    """Whether ``target/.git`` is a work tree link into this repository."""
    marker = target / ".git"
    if not marker.is_file():
        return False
    link = marker.read_text(errors="replace").strip().removeprefix("gitdir:").strip()
    common = git.run("rev-parse", "--git-common-dir").stdout.strip()
    return Path(link).resolve().is_relative_to((git.root / common).resolve() / "worktrees")


def remove_worktree(git: Git, path: Path) -> None:
    """Force-remove a work tree; a missing or half-created one is deleted and pruned. A directory that is
    neither registered nor linked to this repository is refused rather than deleted."""
    target = path.resolve()
    if target == git.root:
        raise GitError(f"git worktree remove {target}: refusing to remove the main work tree")
    try:
        git.run("worktree", "remove", "--force", "--force", str(target))
        return
    except GitError:
        pass
    if target.is_dir():
        empty = not any(target.iterdir())
        if not (empty or target in list_worktrees(git) or _belongs_to(git, target)):
            raise GitError(
                f"git worktree remove {target}: not a work tree of {git.root}; refusing to delete it"
            )
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        raise GitError(f"git worktree remove {target}: not a directory; refusing to delete it")
    git.run("worktree", "prune")


def _check_relative(path: str) -> None:
    parts = PurePosixPath(path).parts
    if not path or PurePosixPath(path).is_absolute() or ".." in parts:
        raise GitError(f"git restore: {path!r} is not a path inside the repository")


def _covered(path: str, names: set[str]) -> bool:
    return path in names or any(n.startswith(path.rstrip("/") + "/") for n in names)


def _names(git: Git, tree: Path, *args: str) -> set[str]:
    return {name for name in git.run("--literal-pathspecs", *args, cwd=tree).stdout.split("\0") if name}


def restore_paths(git: Git, tree: Path, commit: str, paths: Sequence[str]) -> None:
    """Restore ``paths`` (relative to the repository root) in ``tree`` and its index to ``commit``."""
    if not paths:
        return
    for path in paths:
        _check_relative(path)
    tree = tree.resolve()
    at_commit = _names(git, tree, "ls-tree", "-r", "--name-only", "-z", commit, "--", *paths)
    in_index = _names(git, tree, "ls-files", "-z", "--", *paths)
    known = [p for p in paths if _covered(p, at_commit | in_index)]
    if known:
        args = ["--literal-pathspecs", "restore", "-q", f"--source={commit}", "--staged", "--worktree"]
        git.run(*args, "--", *known, cwd=tree)
    for path in paths:
        if _covered(path, at_commit):
            continue
        target = tree / path
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        parent = target.parent
        while parent != tree and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent


def clear_run_locks(git: Git, run_id: str) -> None:
    """Remove the lock files a run killed inside a git command left on its own refs and worktree (only this
    run's: its branch ``assay/<run-id>``, its refs ``refs/assay/<run-id>/`` and its worktree's admin folder)."""
    git_dir = Path(git.run("rev-parse", "--git-common-dir").stdout.strip())
    if not git_dir.is_absolute():
        git_dir = git.root / git_dir
    for lock in [
        *(git_dir / "refs" / "heads" / "assay").glob(f"{run_id}*.lock"),
        *(git_dir / "refs" / "assay" / run_id).glob("*.lock"),
        *(git_dir / "worktrees" / run_id).glob("*.lock"),
    ]:
        lock.unlink(missing_ok=True)
