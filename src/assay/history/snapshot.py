"""Copies of a repository's files in a temporary folder, so that what assay runs never writes into the user's tree.

``init`` measures the baseline on a copy of the commit a run would start from (:func:`copy_commit`), and
``eval`` measures the work tree as it is now on a copy of it (:func:`copy_work_tree`): what a runner, a check
or the Python interpreter writes (outputs, ``__pycache__``, logs) lands in the copy and goes with it. A copy
has no ``.git``: a program that runs git in it finds no repository, never the user's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.history.treestatus import under

if TYPE_CHECKING:
    from assay.history.git import Git


@contextlib.contextmanager
def scratch_folder(prefix: str = "assay-tree-") -> Iterator[Path]:
    """A new folder under the system temp directory, deleted with everything in it at the end (folders a
    program made read-only included)."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield root
    finally:
        shutil.rmtree(root, onerror=_retry_writable)


def _retry_writable(function: Any, path: str, _info: Any) -> None:
    with contextlib.suppress(OSError):
        parent = os.path.dirname(path)
        os.chmod(parent, os.stat(parent).st_mode | stat.S_IRWXU)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, os.stat(path).st_mode | stat.S_IRWXU)
            shutil.rmtree(path, ignore_errors=True)
        else:
            function(path)


def copy_commit(git: Git, commit: str, dest: Path) -> None:
    """Write the files of ``commit`` into the folder ``dest`` as a checkout would (modes, symlinks, filters),
    through a temporary index: neither the user's index nor their work tree is touched."""
    with tempfile.TemporaryDirectory(prefix="assay-index-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        git.run("read-tree", commit, env=env)
        git.run("checkout-index", "--all", "--force", f"--prefix={Path(dest).resolve()}/", env=env)


def copy_work_tree(git: Git, dest: Path, *, skip: Sequence[str] = ()) -> None:
    """Copy the work tree as git sees it into the folder ``dest``: tracked files as they are now (a deleted one
    stays away) and untracked files that are not ignored, except the repository-relative paths under ``skip``
    (the run data). Symbolic links are copied as links."""
    listed = git.run("ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout
    for rel in dict.fromkeys(p.rstrip("/") for p in listed.split("\0") if p):
        source, target = git.root / rel, Path(dest) / rel
        if under(rel, skip) or not os.path.lexists(source):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir() and not source.is_symlink():  # a submodule, or a repository inside this one
            shutil.copytree(
                source, target, symlinks=True, ignore=shutil.ignore_patterns(".git"), dirs_exist_ok=True
            )
        else:
            shutil.copy2(source, target, follow_symlinks=False)
