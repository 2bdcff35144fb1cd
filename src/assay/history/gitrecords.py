"""Typed records read from git output (diff statistics, log entries) and their parsers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

LOG_FORMAT = "%H%x1f%P%x1f%ct%x1f%s"


@dataclass(frozen=True)
class DiffStats:
    """Size of a change: ``files`` changed (a rename counts once, binary files count), lines inserted and
    deleted (text files only), and how many of the files are binary."""

    files: int = 0
    insertions: int = 0
    deletions: int = 0
    binary_files: int = 0


@dataclass(frozen=True)
class LogEntry:
    """One commit: full sha, parent shas (two or more for a merge), subject line, committer time (UTC)."""

    sha: str
    parents: tuple[str, ...]
    subject: str
    time: datetime


def parse_numstat(output: str) -> DiffStats:
    """Parse ``git diff --numstat -z`` output (renames appear as an empty path then old and new names)."""
    fields = output.split("\0")
    files = insertions = deletions = binary = 0
    i = 0
    while i < len(fields):
        record = fields[i]
        i += 1
        if not record:
            continue
        added, deleted, path = record.split("\t", 2)
        if not path:
            i += 2  # rename or copy: the old and new paths follow as separate fields
        files += 1
        if added == "-":
            binary += 1
        else:
            insertions += int(added)
            deletions += int(deleted)
    return DiffStats(files=files, insertions=insertions, deletions=deletions, binary_files=binary)


def parse_log(output: str) -> list[LogEntry]:
    """Parse ``git log -z --format=LOG_FORMAT`` output."""
    entries = []
    for record in output.split("\0"):
        if not record.strip():
            continue
        sha, parents, stamp, subject = record.strip("\n").split("\x1f", 3)
        entries.append(
            LogEntry(
                sha=sha,
                parents=tuple(parents.split()),
                subject=subject,
                time=datetime.fromtimestamp(int(stamp), tz=UTC),
            )
        )
    return entries
