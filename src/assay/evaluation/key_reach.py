"""Who may read the answer key besides the proposer's view, and the refusal of a configuration that lets them.

Refused before anything runs, in one line naming the field, the path, the key file and how
(:func:`refuse_exposed_key`):

- an editable file that is, lies in, or resolves to a file of the answer key (:func:`.answer_key.exposed`);
- an agent proposer's ``home_ro`` entry that is, lies in, links to or holds a key file, or holds a hard link to
  one anywhere below it (the project itself is hidden under an entry above it, so only what lies outside the
  project counts there);
- a ``runner.read_only`` entry (a path or a glob) that is, lies in, links to or holds a file a check runs or
  reads, or holds a hard link to one; and a file a check runs or reads that the runner's own command names.
  Case files, the configuration and the split file are masked in the jail instead, hard links to them included
  (:func:`masked_links`).

Hard links are found by walking the readable folders on the key files' filesystems (:mod:`.key_links`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.config import AssayConfig, ProcessRunnerConfig
from assay.errors import ConfigError
from assay.evaluation.answer_key import KeyFile, answer_key, exposed, identity, relation, shown
from assay.evaluation.key_links import Identity, links_under
from assay.evaluation.named_files import repo_root, runner_files
from assay.model import Case

# Files of a directory a check names whose identities are taken (a larger one is refused no sooner).
MAX_KEY_DIR_FILES = 10_000


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _protected(config: AssayConfig) -> list[Path]:
    """The roots a jail never shows, even under a readable entry above them: the project, its repository and
    the run data directory."""
    base = Path(os.path.realpath(config.base_dir))
    return [p for p in (base, config.data_path, repo_root(base)) if p is not None]


def _identities(keys: Iterable[KeyFile]) -> dict[Identity, KeyFile]:
    """The (device, inode) of each regular file of ``keys``: a key file, the files of a directory a check
    names (up to :data:`MAX_KEY_DIR_FILES`), and the split file of the data directory."""
    found: dict[Identity, KeyFile] = {}
    for key in keys:
        if key.inode is not None:
            found[key.inode] = key
            continue
        files: Iterable[Path] = [key.real / "split.json"] if key.kind == "data" else _files_in(key.real)
        for file in files:
            inode = identity(file)[1]
            if inode is not None:
                found.setdefault(inode, key)
    return found


def _files_in(directory: Path) -> Iterator[Path]:
    count = 0
    for where, _, files in os.walk(directory):
        for name in files:
            count += 1
            if count > MAX_KEY_DIR_FILES:
                return
            yield Path(where) / name


@dataclass(frozen=True)
class Reach:
    """How a readable path shows a key file: ``how`` (``is``, ``resolves to``, ``holds``, ...), and for a hard
    link found inside it, the link."""

    how: str
    key: KeyFile
    link: Path | None = None


def _reaches(
    path: Path, keys: Sequence[KeyFile], ids: dict[Identity, KeyFile], protected: Sequence[Path]
) -> Iterator[Reach]:
    """Every way the readable ``path`` shows a file of ``keys``: it is, lies in or links to one, holds one, or
    holds a hard link to one (``ids``: their identities). A ``protected`` root that ``path`` is above or beside
    is hidden in the jail, and is neither looked into nor counted."""
    real, inode = identity(path)
    masked = [root for root in protected if not _within(real, root)]
    for key in keys:
        how = relation(path, real, inode, key)
        if how is None and real in key.real.parents and not any(_within(key.real, r) for r in masked):
            how = "holds"
        if how is not None:
            yield Reach(how, key)
    for link, key in links_under(real, ids, skip=masked):
        if link not in (key.path, key.real):
            yield Reach("holds", key, link)


def _describe(config: AssayConfig, reach: Reach) -> str:
    key = f"{reach.key.what}, {shown(config, reach.key.path)}"
    if reach.link is None:
        return f"{reach.how} {key}"
    return f"holds {shown(config, reach.link)}, a hard link to {key}"


def _agent_reads(config: AssayConfig, keys: Sequence[KeyFile]) -> tuple[int, Reach] | None:
    """The first ``home_ro`` entry of an agent proposer that shows a key file, and how (see :func:`_reaches`;
    the agent's jail hides the project under any entry above it, never one inside it)."""
    proposer = config.evolve.proposer
    if proposer.type != "agent" or not proposer.home_ro:
        return None
    ids = _identities(keys)
    protected = _protected(config)
    for index, entry in enumerate(proposer.home_ro):
        for reach in _reaches(Path(entry).expanduser(), keys, ids, protected):
            return index, reach
    return None


def _read_only_paths(config: AssayConfig) -> Iterator[tuple[int, Path]]:
    """Each existing path a ``runner.read_only`` entry shows, with the entry's index: relative entries against
    the artifact root, globs expanded (as the jail expands them)."""
    runner = config.runner
    if not isinstance(runner, ProcessRunnerConfig):
        return
    for index, entry in enumerate(runner.read_only):
        pattern = str(Path(entry.strip()).expanduser()) if entry.strip() else ""
        if not pattern:
            continue
        root = Path("/") if Path(pattern).is_absolute() else config.artifact_dir
        if any(ch in pattern for ch in "*?["):
            for path in sorted(root.glob(pattern.lstrip("/") if root == Path("/") else pattern)):
                yield index, Path(os.path.normpath(path))
        else:
            path = Path(os.path.normpath(root / pattern))
            if os.path.lexists(path):
                yield index, path


def _runner_reads(config: AssayConfig, keys: Sequence[KeyFile]) -> tuple[str, str] | None:
    """The field and message of the first thing the runner is given that shows a file a check runs or reads:
    a ``read_only`` entry (see :func:`_reaches`), or a file its own command names."""
    runner = config.runner
    if not isinstance(runner, ProcessRunnerConfig):
        return None
    checks = [key for key in keys if key.kind == "check"]
    if not checks:
        return None
    named = "command" if hasattr(runner, "command") else "function"
    for path in sorted(runner_files(config)):
        if not os.path.lexists(path):
            continue
        real, inode = identity(path)
        for key in checks:
            how = relation(path, real, inode, key)
            if how is not None:
                return f"runner.{named}", (
                    f"names {shown(config, path)}, which {how} {key.what}, {shown(config, key.path)}: candidates would read"
                    " the answer key; give the runner a file of its own with only what it needs (the inputs)"
                    " and keep what the check compares against in a file that only the check names"
                )
    ids = _identities(checks)
    protected = _protected(config)
    for index, path in _read_only_paths(config):
        for reach in _reaches(path, checks, ids, protected):
            return f"runner.read_only[{index}]", (
                f"{shown(config, path)} {_describe(config, reach)}: candidates would read the answer key;"
                " declare only what the runner itself reads, and keep a check's files out of those folders"
            )
    return None


def masked_links(config: AssayConfig, keys: Sequence[KeyFile]) -> list[Path]:
    """The files under ``runner.read_only`` entries that are hard links to a case file, the configuration or
    the split file: the jail masks them as it masks those (a symlink to one shows what the jail shows at its
    target, which is masked already)."""
    hidden = [key for key in keys if key.kind != "check"]
    ids = _identities(hidden)
    protected = _protected(config)
    found = [
        reach.link for _, path in _read_only_paths(config) for reach in _reaches(path, hidden, ids, protected)
    ]
    return sorted({link for link in found if link is not None})


def refuse_exposed_key(config: AssayConfig, cases: Sequence[Case]) -> None:
    """Raise a one-line ConfigError when an editable file (``artifact.paths``), a path the agent proposer may
    read (``evolve.proposer.home_ro``), a path shown to candidates (``runner.read_only``) or a file the
    runner's command names exposes the answer key (see the module docstring)."""
    keys = answer_key(config, cases)
    found = exposed(config, cases, keys=keys)
    if found:
        first = found[0]
        more = f" (and {len(found) - 1} more editable file(s))" if len(found) > 1 else ""
        raise ConfigError(
            f"the editable file {first.editable} {first.how} {first.key.what}, {shown(config, first.key.path)}"
            f"{more}: the proposer would see and could edit the answer key; narrow artifact.paths or add "
            f"{first.editable} to artifact.forbid",
            file=config.path,
            field="artifact.paths",
        )
    agent = _agent_reads(config, keys)
    if agent is not None:
        index, reach = agent
        entry = config.evolve.proposer.home_ro[index]
        raise ConfigError(
            f"{entry} {_describe(config, reach)}: the agent proposer would read the answer key; list only its"
            " own tools and login here",
            file=config.path,
            field=f"evolve.proposer.home_ro[{index}]",
        )
    runner = _runner_reads(config, keys)
    if runner is not None:
        field, message = runner
        raise ConfigError(message, file=config.path, field=field)
