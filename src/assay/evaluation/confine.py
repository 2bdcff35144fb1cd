"""The candidates' jail (``runner.sandbox``): what it hides and what it shows, from the configuration and cases.

Deny by default: in the work directory (the artifact root, in a run's worktree or a copy of the project) a
candidate sees only the editable files (``artifact.paths``), the files the runner's own command or function names
(for ``pkg.mod:fn`` its module and the ``__init__.py`` of the packages on the way), ``runner.read_only``, the
``artifact.forbid`` files (a harness, read-only) and the outputs ``file_exists`` checks look for; every other
entry is masked (:mod:`assay.sandbox.survey`).

Hidden even when declared so: the case files, ``assay.yaml``, the repository's ``.git``, the data directory,
and every file a check runs or reads — found generically in every string of every check's ``value``,
``options`` and ``text`` (``file://x``, ``x.py:fn``, ``pkg.mod:fn``, and any other word naming an existing file or
directory by a path with a ``/`` or an extension) — with the folder it lies in (unless the artifact root, or
a folder holding an editable or runner file), and every ``file://`` a case file names. Editable files, the
files the runner's own command names and ``runner.read_only`` are never hidden. The project, the repository
and the data directory themselves are never mounted, except the work directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from assay.config import AssayConfig, ProcessRunnerConfig
from assay.errors import ConfigError
from assay.evaluation.answer_key import answer_key
from assay.evaluation.key_reach import masked_links
from assay.evaluation.named_files import check_files, named_by_case_files, repo_root, runner_files
from assay.history.scope import matches_any
from assay.model import Case, CheckSpec
from assay.sandbox import bwrap_status, interpreter_paths, path_dirs, scrubbed_env
from assay.sandbox.jail import WorkdirJail
from assay.sandbox.survey import literal


def _outputs(specs: Iterable[CheckSpec]) -> list[str]:
    """The paths or globs ``file_exists`` checks look for: what candidates write, never check data."""
    return [s.value.strip() for s in specs if s.type == "file_exists" and isinstance(s.value, str)]


def _check_folder(path: Path, config: AssayConfig, keep: Iterable[Path]) -> Path | None:
    """The folder of a file a check names, to hide with it: None for the artifact root and above, or a
    folder that holds a file the candidate is made of or the runner needs."""
    folder, artifact = path.parent, config.artifact_dir
    if not path.is_file() or folder == artifact or artifact not in folder.parents:
        return None
    if any(folder == k or folder in k.parents for k in keep):
        return None
    for where, _, files in os.walk(folder):
        rel = Path(os.path.relpath(where, artifact))
        if any(matches_any((rel / f).as_posix(), config.artifact.paths) for f in files):
            return None
    return folder


def candidate_jail(config: AssayConfig, cases: Sequence[Case]) -> WorkdirJail:
    """The jail of this project's candidates (see the module docstring)."""
    runner = config.runner
    assert isinstance(runner, ProcessRunnerConfig)
    base = config.base_dir.resolve()
    artifact = config.artifact_dir
    repo = repo_root(base)
    data = config.data_path
    case_files = [(base / f).resolve() for f in config.cases.all_files]
    hidden: set[Path] = {*case_files, data}
    if config.path is not None:
        hidden.add(config.path.resolve())
    if repo is not None:
        hidden.add(repo / ".git")
    dirs = [base, artifact, *{Path(c.source).parent for c in cases if c.source}]
    specs = [*config.checks, *(spec for case in cases for spec in case.checks)]
    outputs = _outputs(specs)
    programs = check_files([s for s in specs if s.type != "file_exists"], dirs)
    named = programs | named_by_case_files(case_files)
    inside = repo or base
    words = runner_files(config)
    keep = set(words)
    read_only = [p for p in runner.read_only if not Path(p).expanduser().is_absolute()]
    keep |= {Path(os.path.normpath(artifact / p)) for p in read_only}
    for path in named:
        rel = os.path.relpath(path, artifact)
        if path in keep or inside not in path.parents or path in artifact.parents or path == artifact:
            continue  # needed by the runner, outside the project, or the project itself
        if artifact in path.parents and matches_any(Path(rel).as_posix(), config.artifact.paths):
            continue  # an editable file: the candidate is made of it
        hidden.add(path)
        folder = _check_folder(path, config, keep) if path in programs else None
        if folder is not None:
            hidden.add(folder)
    # Hard links to a case file (or the configuration) under a read_only entry are masked as it is; inside the
    # project by their place in any work directory (a worktree holds a copy of the same bytes there).
    hidden.update(masked_links(config, answer_key(config, cases)))
    shown = [*config.artifact.paths, *config.artifact.forbid, *read_only, *outputs]
    shown += [literal(os.path.relpath(w, artifact)) for w in words if artifact in w.parents]
    env = scrubbed_env(runner.env_allow, runner.env)
    readable = [*interpreter_paths(), *path_dirs(env)]
    readable += [Path(p).expanduser() for p in runner.read_only if Path(p).expanduser().is_absolute()]
    return WorkdirJail(
        hidden=tuple(sorted({_relative(p, artifact, inside) for p in hidden} | {".git"})),
        read_only=(*config.artifact.forbid, *read_only),
        readable=tuple(readable),
        protected=tuple(p for p in (base, repo, data) if p is not None),
        fallback_dir=artifact,
        network=runner.network,
        shown=tuple(dict.fromkeys(shown)),
    )


def _relative(path: Path, artifact: Path, inside: Path) -> str:
    """A hidden path as the jail takes it: relative to the artifact root when it lies in the project (so it is
    found in any work directory), else absolute."""
    return os.path.relpath(path, artifact) if path == inside or inside in path.parents else str(path)


def runner_jail(config: AssayConfig, cases: Sequence[Case]) -> tuple[WorkdirJail | None, str | None]:
    """The candidates' jail and, when they run without one, why: ``(jail, None)`` or ``(None, reason)``;
    ``(None, None)`` for a runner that starts no process (llm). ``runner.sandbox: strict`` on a machine where
    bubblewrap cannot run is a ConfigError."""
    runner = config.runner
    if not isinstance(runner, ProcessRunnerConfig):
        return None, None
    if runner.sandbox == "none":
        return None, "runner.sandbox is none"
    status = bwrap_status()
    if not status.available:
        if runner.sandbox == "strict":
            raise ConfigError(f"strict, but {status.reason}", file=config.path, field="runner.sandbox")
        return None, status.reason
    return candidate_jail(config, cases), None
