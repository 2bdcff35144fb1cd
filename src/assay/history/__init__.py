"""Run history: git as the memory of a run (branches, candidate refs, worktrees, adoption) and scope."""

from assay.history.git import Git
from assay.history.gitrecords import DiffStats, LogEntry
from assay.history.gitrun import GitError
from assay.history.merge import MergeKind
from assay.history.scope import artifact_files, matches_any, out_of_scope

__all__ = [
    "DiffStats",
    "Git",
    "GitError",
    "LogEntry",
    "MergeKind",
    "artifact_files",
    "matches_any",
    "out_of_scope",
]
