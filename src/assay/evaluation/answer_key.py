"""The answer key, and the editable files that would hand it to the proposer.

The **answer key** of a project is every file that says what a good output is or which cases are held out:
the case files, the configuration, the run data directory (``.assay``, with ``split.json``), and the files a
check runs or reads — every path a program check (``script``, ``python``, ``javascript``) names, a
``json_schema`` check's schema file, and every ``file://`` any other check names (a rubric, a transform).

The editable files are shown to the proposer whole (``# Artifact files``, the agent's copy) and it may rewrite
them, so an editable file that is, lies in, or resolves to (through a symlink or a hard link) a file of the
answer key is a configuration error, raised before anything runs (:func:`exposed`; what else may read the key
is refused or masked by :mod:`assay.evaluation.key_reach`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from assay.config import AssayConfig
from assay.evaluation.key_links import Identity
from assay.evaluation.named_files import check_files, strings_in
from assay.history.scope import artifact_files
from assay.model import Case, CheckSpec

# Checks whose value or options are a program or a command: every path-like word in them is read.
PROGRAM_CHECKS = frozenset(("script", "python", "javascript"))
_FILE_URL = re.compile(r"file://[^\s'\"`,;()\[\]{}<>|&]+")


KeyKind = Literal["data", "config", "case", "check"]
_WHAT: dict[KeyKind, str] = {
    "data": "the run data directory",
    "config": "the configuration",
    "case": "a case file",
    "check": "a file a check runs or reads",
}


@dataclass(frozen=True)
class KeyFile:
    """A file or directory of the answer key (absolute, normalised) and its kind; ``real`` and ``inode`` are
    its identity (:func:`identity`), read once."""

    path: Path
    kind: KeyKind
    real: Path
    inode: Identity | None

    @classmethod
    def at(cls, path: Path, kind: KeyKind) -> KeyFile:
        return cls(path, kind, *identity(path))

    @property
    def what(self) -> str:
        """What it is, for messages (``a case file``)."""
        return _WHAT[self.kind]


def _file_urls(spec: CheckSpec) -> CheckSpec | None:
    """``spec`` reduced to the ``file://`` references in its strings (a text check's other words are text);
    None when it has none."""
    if isinstance(spec.value, str) and not spec.options and "file://" not in spec.value:
        return None  # the common case, thousands of times: a plain string to compare with
    urls = [url for text in strings_in([spec.value, spec.options]) for url in _FILE_URL.findall(text)]
    return CheckSpec(type=spec.type, value=urls) if urls else None


def _program_specs(specs: Iterable[CheckSpec]) -> list[CheckSpec]:
    """The specs to scan for files: program checks and a schema file's path whole, the others by their
    ``file://`` references; an ``assert_set``'s items are checks of their own."""
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
        whole = spec.type in PROGRAM_CHECKS or (spec.type == "json_schema" and isinstance(spec.value, str))
        reduced = spec if whole else _file_urls(spec)
        if reduced is not None:
            found.append(reduced)
    return found


def shown(config: AssayConfig, path: Path) -> str:
    for root in (config.base_dir.resolve(), config.artifact_dir):
        if path == root or root in path.parents:
            return os.path.relpath(path, root)
    return str(path)


def answer_key(config: AssayConfig, cases: Sequence[Case]) -> list[KeyFile]:
    """The files of this project's answer key (see the module docstring) that exist."""
    base = config.base_dir.resolve()
    found: list[tuple[Path, KeyKind]] = [(config.data_path, "data")]
    if config.path is not None:
        found.append((config.path.resolve(), "config"))
    found += [(Path(os.path.normpath(base / f)), "case") for f in config.cases.all_files]
    dirs = [
        base,
        config.artifact_dir,
        *{Path(source).parent for source in {c.source for c in cases if c.source}},
    ]
    specs = _program_specs([*config.checks, *(spec for case in cases for spec in case.checks)])
    found += [(path, "check") for path in sorted(check_files(specs, dirs))]
    return [KeyFile.at(path, kind) for path, kind in found if os.path.lexists(path)]


def identity(path: Path) -> tuple[Path, tuple[int, int] | None]:
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


def relation(path: Path, real: Path, inode: tuple[int, int] | None, key: KeyFile) -> str | None:
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
        real, inode = identity(path)
        how = next(((key, h) for key in keys if (h := relation(path, real, inode, key))), None)
        if how is not None:
            found.append(Exposure(rel, *how))
    return found
