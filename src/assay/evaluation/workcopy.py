"""Where ``init`` and ``eval`` run the cases: a temporary copy of the project, never the user's tree.

``init`` measures the baseline on a copy of the commit a run starts from, so its numbers are the ones
``evolve`` starts from; ``eval`` measures the work tree as it is now (uncommitted edits and untracked files
included, ignored files and the run data left out), on a copy. Whatever the runner, its checks or Python write
there (outputs, ``__pycache__``, an agent's edits) is deleted with the copy. Outside a git repository, and
with ``assay eval --workdir``, cases run where they are (see docs/evolve.md, "Your tree").
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from assay.config import AssayConfig
from assay.fsutil import relative_posix
from assay.history.git import Git
from assay.history.gitrun import GitError
from assay.history.snapshot import copy_commit, copy_work_tree, scratch_folder


def repository_of(config: AssayConfig) -> Git | None:
    """The repository holding the artifact; None outside one, or without a working git (``eval`` needs none)."""
    try:
        return Git.discover(config.artifact_dir)
    except GitError:
        return None


@contextlib.contextmanager
def project_copy(config: AssayConfig, git: Git | None, *, commit: str | None = None) -> Iterator[Path | None]:
    """The artifact root inside a temporary copy of ``git``'s repository: of ``commit``, or of the work tree as
    it is when None. Yields None (run in place) without a repository, or when the artifact lies outside it."""
    prefix = None if git is None else relative_posix(config.artifact_dir, git.root)
    if git is None or prefix is None:
        yield None
        return
    with scratch_folder("assay-copy-") as scratch:
        root = scratch / git.root.name
        root.mkdir()
        if commit is not None:
            copy_commit(git, commit, root)
        else:
            data = relative_posix(config.data_path, git.root)
            copy_work_tree(git, root, skip=[data] if data else [])
        workdir = root / prefix if prefix else root
        workdir.mkdir(parents=True, exist_ok=True)
        yield workdir
