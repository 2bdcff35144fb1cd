"""The answer key, and the refusal of a configuration that would hand it to the proposer.

The **answer key** of a project is every file that says what a good output is or which cases are held out:
the case files, the configuration, the run data directory (``.assay``, with ``split.json``), and the files a
check runs or reads — every path a program check (``script``, ``python``, ``javascript``) names, and every
``file://`` any other check names (a JSON schema, a rubric, a transform).

The editable files are shown to the proposer whole (``# Artifact files``, the agent's copy) and it may
rewrite them, so an editable file that is, lies in, or resolves to (through a symlink or a hard link) a file
of the answer key is a configuration error, raised before anything runs: :func:`refuse_editable_key`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.config import AssayConfig
from assay.errors import ConfigError
from assay.evaluation.confine import check_files, strings_in
from assay.history.scope import artifact_files
from assay.model import Case, CheckSpec

# Checks whose value or options are a program or a command: every path-like word in them is read.
PROGRAM_CHECKS = frozenset(("script", "python", "javascript"))
_FILE_URL = re.compile(r"file://[^\s'\"`,;()\[\]{}<>|&]+")


@dataclass(frozen=True)
class KeyFile:
    """A file or directory of the answer key (absolute, normalised) and what it is, for messages; ``real`` and
    ``inode`` are its identity (:func:`_identity`), read once."""

    path: Path
    what: str
    real: Path
    inode: tuple[int, int] | None

    @classmethod
    def at(cls, path: Path, what: str) -> KeyFile:
        return cls(path, what, *_identity(path))


def _file_urls(spec: CheckSpec) -> CheckSpec:
    """``spec`` reduced to the ``file://`` references in its strings (a text check's other words are text)."""
    urls = [url for text in strings_in([spec.value, spec.options]) for url in _FILE_URL.findall(text)]
    return CheckSpec(type=spec.type, value=urls)


def _program_specs(specs: Iterable[CheckSpec]) -> list[CheckSpec]:
    """The specs to scan for files: program checks whole, the others by their ``file://`` references;
    an ``assert_set``'s items are checks of their own."""
    found: list[CheckSpec] = []
    for spec in specs:
        if spec.type == "assert_set" and isinstance(spec.value, list):
            items = [item for item in spec.value if isinstance(item, dict)]
            nested = []
            for item in items:
                try:
                    nested.append(CheckSpec.model_validate(item))
                except ValueError:
                    continue  # the check's own loading names what is wrong with it
            found += _program_specs(nested)
        found.append(spec if spec.type in PROGRAM_CHECKS else _file_urls(spec))
    return found


def _shown(config: AssayConfig, path: Path) -> str:
    for root in (config.base_dir.resolve(), config.artifact_dir):
        if path == root or root in path.parents:
            return os.path.relpath(path, root)
    return str(path)


def answer_key(config: AssayConfig, cases: Sequence[Case]) -> list[KeyFile]:
    """The files of this project's answer key (see the module docstring) that exist."""
    base = config.base_dir.resolve()
    found = [(config.data_path, "the run data directory")]
    if config.path is not None:
        found.append((config.path.resolve(), "the configuration"))
    found += [(Path(os.path.normpath(base / f)), "a case file") for f in config.cases.all_files]
    dirs = [base, config.artifact_dir, *{Path(c.source).parent for c in cases if c.source}]
    specs = _program_specs([*config.checks, *(spec for case in cases for spec in case.checks)])
    found += [(path, "a file a check runs or reads") for path in sorted(check_files(specs, dirs))]
    return [KeyFile.at(path, what) for path, what in found if os.path.lexists(path)]


def _identity(path: Path) -> tuple[Path, tuple[int, int] | None]:
    """The real path, and the (device, inode) of a regular file (a hard link shares it)."""
    real = Path(os.path.realpath(path))
    try:
        info = os.stat(real)
    except OSError:
        return real, None
    return real, (info.st_dev, info.st_ino) if os.path.isfile(real) else None


@dataclass(frozen=True)
class Exposure:
    """An editable file (artifact-relative) and the key file it exposes: ``how`` it does, for messages."""

    editable: str
    key: KeyFile
    how: str


def _relation(path: Path, real: Path, inode: tuple[int, int] | None, key: KeyFile) -> str | None:
    if path == key.path:
        return "is"
    if key.path in path.parents:
        return "is in"
    if real == key.real:
        return "resolves to"
    if key.real in real.parents:
        return "resolves into"
    if inode is not None and inode == key.inode:
        return "is a hard link to"
    return None


def exposed(
    config: AssayConfig,
    cases: Sequence[Case],
    root: Path | None = None,
    keys: Sequence[KeyFile] | None = None,
) -> list[Exposure]:
    """Each editable file under ``root`` (default: the artifact root) that is, lies in or resolves to a file
    of the answer key (``keys``, default :func:`answer_key`), through a symlink or a hard link."""
    root = root or config.artifact_dir
    keys = answer_key(config, cases) if keys is None else keys
    found = []
    for rel in artifact_files(root, config.artifact.paths, forbid=config.artifact.forbid):
        path = Path(os.path.normpath(root / rel))
        real, inode = _identity(path)
        how = next(((key, h) for key in keys if (h := _relation(path, real, inode, key))), None)
        if how is not None:
            found.append(Exposure(rel, *how))
    return found


def _agent_reads(config: AssayConfig, keys: Sequence[KeyFile]) -> tuple[int, str, KeyFile] | None:
    """The first ``home_ro`` entry of an agent proposer that shows a key file, with it and how: the entry is,
    lies in or is a hard link to one, or holds one while inside the project (the agent's jail hides the
    project under any entry above it, never one inside it)."""
    proposer = config.evolve.proposer
    if proposer.type != "agent":
        return None
    base = Path(os.path.realpath(config.base_dir))
    for index, entry in enumerate(proposer.home_ro):
        path = Path(entry).expanduser()
        real, inode = _identity(path)
        for key in keys:
            if real == key.real or key.real in real.parents or (inode is not None and inode == key.inode):
                return index, "shows", key
            if real in key.real.parents and (real == base or base in real.parents):
                return index, "holds", key
    return None


def refuse_editable_key(config: AssayConfig, cases: Sequence[Case]) -> None:
    """Raise a one-line ConfigError when an editable file (``artifact.paths``), or a file the agent proposer
    may read (``evolve.proposer.home_ro``), exposes the answer key."""
    keys = answer_key(config, cases)
    found = exposed(config, cases, keys=keys)
    if not found:
        agent = _agent_reads(config, keys)
        if agent is not None:
            index, how, key = agent
            raise ConfigError(
                f"{how} {key.what}, {_shown(config, key.path)}: the agent proposer would read the answer key; "
                "list only its own tools and login here",
                file=config.path,
                field=f"evolve.proposer.home_ro[{index}]",
            )
        return
    first = found[0]
    more = f" (and {len(found) - 1} more editable file(s))" if len(found) > 1 else ""
    raise ConfigError(
        f"the editable file {first.editable} {first.how} {first.key.what}, {_shown(config, first.key.path)}"
        f"{more}: the proposer would see and could edit the answer key; narrow artifact.paths or add "
        f"{first.editable} to artifact.forbid",
        file=config.path,
        field="artifact.paths",
    )
