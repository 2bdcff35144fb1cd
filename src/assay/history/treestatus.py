"""What a user's work tree holds beyond its last commit, sorted by what a run does with it.

A run starts from a commit and reads, besides, only assay's own inputs (the configuration and the case files)
from the work tree. So a change blocks a run only when the run would need it or lose it: a change to a
tracked file (modified, staged, deleted, renamed), or an untracked file the run needs (an editable file, a file
the runner or a script check runs). Other untracked files (a log, scratch notes) are not part of the run: they
are named once and left alone. Ignored files do not exist for this (``git status`` does not list them).

:func:`parse_status` reads ``git status --porcelain=v1 -z``; :func:`sort_status` is pure, so every rule is
tested without a repository.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class StatusEntry:
    """One path ``git status`` reports: ``code`` is its two status letters (``" M"``, ``"A "``, ``"??"``)."""

    code: str
    path: str

    @property
    def untracked(self) -> bool:
        return self.code == "??"


@dataclass(frozen=True)
class TreeStatus:
    """``blocking``: changes a run would need or lose; ``outside``: untracked files that are not part of it;
    ``inputs``: assay's own inputs that differ from the last commit (new or changed; read as they are)."""

    blocking: tuple[StatusEntry, ...] = ()
    outside: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()


def parse_status(text: str) -> list[StatusEntry]:
    """The entries of ``git status --porcelain=v1 -z`` output; a rename or copy gives its new and its old path,
    and ignored entries (``!!``) are left out."""
    fields = text.split("\0")
    found: list[StatusEntry] = []
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        code = entry[:2]
        if code == "!!":
            continue
        found.append(StatusEntry(code, entry[3:]))
        if code[0] in "RC" and i < len(fields):
            found.append(StatusEntry(code, fields[i]))  # the original path of a staged rename or copy
            i += 1
    return found


def under(path: str, roots: Iterable[str]) -> bool:
    """Whether the repository-relative ``path`` is one of ``roots`` or lies below one."""
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots if root)


def sort_status(
    entries: Sequence[StatusEntry],
    *,
    skip: Sequence[str] = (),
    inputs: Callable[[str], bool] = lambda path: False,
    needed: Callable[[str], bool] = lambda path: False,
) -> TreeStatus:
    """Sort ``entries`` (see the module docstring). Paths under ``skip`` (the run data) count nowhere, and
    ``inputs`` (read from the work tree as they are: the configuration, the case files) never block; a tracked
    change blocks; an untracked path blocks when ``needed``, else it is ``outside``."""
    blocking: dict[str, StatusEntry] = {}
    outside: dict[str, None] = {}
    changed_inputs: dict[str, None] = {}
    for entry in entries:
        if under(entry.path, skip):
            continue
        if inputs(entry.path):
            if "D" not in entry.code:
                changed_inputs[entry.path] = None
            continue
        if not entry.untracked or needed(entry.path):
            blocking.setdefault(entry.path, entry)
        else:
            outside[entry.path] = None
    return TreeStatus(tuple(blocking.values()), tuple(outside), tuple(changed_inputs))


def name_paths(paths: Sequence[str], limit: int = 5) -> str:
    """``paths`` for one line: a top-level folder holding several of them once (``logs/ (12 files)``), at most
    ``limit`` names, then how many more."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        head, slash, _ = path.partition("/")
        groups.setdefault(head + "/" if slash else path, []).append(path)
    names = [
        group if len(members) == 1 and not group.endswith("/") else _folder(group, members)
        for group, members in groups.items()
    ]
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _folder(group: str, members: list[str]) -> str:
    return members[0] if len(members) == 1 else f"{group} ({len(members)} files)"
