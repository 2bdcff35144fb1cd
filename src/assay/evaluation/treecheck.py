"""Before ``init`` and ``evolve``: which changes in the user's work tree a run would need or lose.

A run starts from the last commit (its candidates live in a worktree of their own) and reads from the work tree
only assay's own inputs, the configuration and the case files, as they are. So it refuses a change to a tracked
file, and an untracked file it would need: an editable file (``artifact.paths``), a harness file
(``artifact.forbid``), a file the runner's command or function names, a file a ``script`` check runs in the
work directory. Any other untracked file (a log, notes) is not part of the run: it is named once and ignored.
The sorting rules are in :mod:`assay.history.treestatus`.
"""

from __future__ import annotations

from collections.abc import Iterable

from assay.config import AssayConfig
from assay.errors import AssayError
from assay.evaluation.named_files import check_files, runner_files
from assay.fsutil import relative_posix
from assay.history.git import Git
from assay.history.scope import matches_any
from assay.history.treestatus import StatusEntry, TreeStatus, name_paths, sort_status
from assay.model import Case


def check_tree(config: AssayConfig, git: Git, cases: Iterable[Case] = ()) -> TreeStatus:
    """The user's work tree sorted for a run of ``config`` (``cases``: their ``script`` checks' files count)."""
    root = git.root
    inputs = {relative_posix(config.base_dir / f, root) for f in config.cases.all_files}
    if config.path is not None:
        inputs.add(relative_posix(config.path, root))
    data = relative_posix(config.data_path, root)
    prefix = relative_posix(config.artifact_dir, root)
    specs = [*config.checks, *(spec for case in cases for spec in case.checks)]
    scripts = check_files([s for s in specs if s.type == "script"], [config.artifact_dir])
    files = {relative_posix(p, root) for p in (*runner_files(config), *scripts)}
    patterns = [*config.artifact.paths, *config.artifact.forbid]

    def needed(path: str) -> bool:
        if path in files:
            return True
        if prefix is None or (prefix and not path.startswith(prefix + "/")):
            return False
        return matches_any(path[len(prefix) + 1 :] if prefix else path, patterns)

    return sort_status(git.status(), skip=[data] if data else [], inputs=inputs.__contains__, needed=needed)


def _kind(entry: StatusEntry) -> str:
    if entry.untracked:
        return "untracked"
    for letter, word in (("D", "deleted"), ("R", "renamed"), ("A", "added"), ("U", "unmerged")):
        if letter in entry.code:
            return word
    return "modified"


def refuse(status: TreeStatus, command: str) -> None:
    """AssayError in one line when ``status`` has changes a run would need or lose (``command`` is what refuses)."""
    if not status.blocking:
        return
    named = [f"{e.path} ({_kind(e)})" for e in status.blocking[:3]]
    more = f" and {len(status.blocking) - 3} more" if len(status.blocking) > 3 else ""
    raise AssayError(
        f"the working tree has uncommitted changes a run would need or lose: {', '.join(named)}{more};"
        f" commit or stash them before `{command}`: a run starts from the last commit"
    )


def outside_line(status: TreeStatus) -> str | None:
    """The one line naming the untracked files that are not part of the run, or None when there are none."""
    if not status.outside:
        return None
    return f"not part of the run, left alone: {name_paths(status.outside)}"
