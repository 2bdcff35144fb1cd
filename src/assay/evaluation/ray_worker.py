"""What runs inside a Ray worker process: one case run, and the preflight probe.

A worker unpacks the project bundle once per session and each candidate tree once, rebuilds the evaluator from
the session's recipe (so the runner's jail, limits and scrubbed environment are decided on the worker by the
same rules as on a local machine, bubblewrap or not), and runs the case with no trace file: the driver writes
traces. The event loop and the evaluators live for the worker process's lifetime, so clients are reused."""

from __future__ import annotations

import asyncio
import atexit
import os
import platform
import shlex
import shutil
import sys
import tempfile
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.evaluation.bundle import unpack
from assay.evaluation.evaluator import REMOTE_UNSANDBOXED, Evaluator, EvaluatorRecipe
from assay.history.owner import LOCK_NAME, RunOwner, is_live
from assay.model import Case, CaseResult, Split

TREES_KEPT = 8  # candidate trees kept unpacked per worker process (a generation touches one or two)
SESSIONS_KEPT = 4


@dataclass(frozen=True)
class CaseJob:
    """One case run as it travels to a worker: the case, its split, the run index (fresh samples for
    repeated runs) and the digests naming the session and the candidate tree."""

    case: Case
    split: Split
    run_index: int
    session: str
    tree: str


@dataclass
class _Session:
    root: Path
    evaluator: Evaluator
    cases: dict[str, Case]


_LOOP: asyncio.AbstractEventLoop | None = None
_SESSIONS: OrderedDict[str, _Session] = OrderedDict()
_TREES: OrderedDict[str, Path] = OrderedDict()
_SCRATCH: Path | None = None


SCRATCH_PREFIX = "assay-worker-"
STALE_AFTER_S = 60.0  # a lock file this recent may belong to a worker still taking it
_OWNER: RunOwner | None = None


def _scratch() -> Path:
    global _SCRATCH, _OWNER
    if _SCRATCH is None:
        _SCRATCH = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
        # Held for the process's life; the kernel drops it however the process ends.
        _OWNER = RunOwner(_SCRATCH)
        _OWNER.acquire()
        atexit.register(shutil.rmtree, _SCRATCH, True)
        sweep_dead_scratch(_SCRATCH.parent)
    return _SCRATCH


def sweep_dead_scratch(parent: Path, stale_after: float = STALE_AFTER_S) -> list[Path]:
    """Remove the scratch directories whose worker process has ended, and return them. Ray ends its workers with
    SIGKILL when a driver or node goes, so their exit handlers never run; the next worker on the machine cleans
    up after them. A worker holds its directory's owner lock (:mod:`assay.history.owner`) while it lives, so
    neither a reused process id nor another container's process ids can mislead the sweep."""
    removed = []
    now = time.time()
    for path in parent.glob(f"{SCRATCH_PREFIX}*"):
        try:
            recent = now - (path / LOCK_NAME).stat().st_mtime < stale_after
        except OSError:  # no lock file: not a worker's scratch directory
            continue
        if recent or is_live(path):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _loop() -> asyncio.AbstractEventLoop:
    global _LOOP
    if _LOOP is None:
        _LOOP = asyncio.new_event_loop()
    return _LOOP


def relocate(recipe: EvaluatorRecipe, root: Path) -> EvaluatorRecipe:
    """The recipe with its project moved to ``root``: the config file, case sources under the project, and a
    private data directory (caches stay per worker)."""
    from dataclasses import replace

    config = recipe.config
    assert config.path is not None
    old = config.path.parent

    def move(pairs: list[tuple[Case, Split]] | None) -> list[tuple[Case, Split]] | None:
        if pairs is None:
            return None
        moved = []
        for case, split in pairs:
            source = case.source
            if source and Path(source).is_absolute() and Path(source).is_relative_to(old):
                source = str(root / Path(source).relative_to(old))
            moved.append((case.model_copy(update={"source": source}), split))
        return moved

    local = config.model_copy(update={"data_dir": str(root / ".assay-worker")}, deep=True)
    local.path = root / config.path.name
    local.executor = local.executor.model_copy(update={"type": "local"})
    return replace(recipe, config=local, cases=move(recipe.cases) or [], all_cases=move(recipe.all_cases))


def _session(key: str, refs: list[Any]) -> _Session:
    import ray

    session = _SESSIONS.get(key)
    if session is not None:
        _SESSIONS.move_to_end(key)
        return session
    from assay.evaluation.session import build_evaluator

    recipe, project = ray.get(refs[:2])
    root = unpack(project, _scratch() / f"project-{key[:16]}")
    moved = relocate(recipe, root)
    evaluator = build_evaluator(
        moved.config,
        moved.cases,
        use_cache=moved.use_cache,
        concurrency=moved.concurrency,
        judge_votes=moved.judge_votes,
        all_cases=moved.all_cases,
        bind=False,
    )
    session = _Session(root, evaluator, {case.id: case for case, _ in moved.cases})
    _SESSIONS[key] = session
    while len(_SESSIONS) > SESSIONS_KEPT:
        _, old = _SESSIONS.popitem(last=False)
        _loop().run_until_complete(old.evaluator.aclose())
        shutil.rmtree(old.root, ignore_errors=True)
    return session


def _tree(digest: str, ref: Any) -> Path:
    import ray

    path = _TREES.get(digest)
    if path is not None:
        _TREES.move_to_end(digest)
        return path
    path = unpack(ray.get(ref), _scratch() / f"tree-{digest[:16]}")
    _TREES[digest] = path
    while len(_TREES) > TREES_KEPT:
        _, old = _TREES.popitem(last=False)
        shutil.rmtree(old, ignore_errors=True)
    return path


def run_case_job(refs: list[Any], job: CaseJob) -> CaseResult:
    """The Ray task body: ``refs`` are the (recipe, project bundle, tree bundle) object refs, nested in a list
    so Ray does not fetch them for a worker that already has them unpacked."""
    from assay.llm.base import RUN_INDEX

    session = _session(job.session, refs)
    tree = _tree(job.tree, refs[2])
    # The session's own copy of the case: its checks are bound once, with paths moved to this worker.
    case = session.cases.get(job.case.id, job.case)

    async def run() -> CaseResult:
        token = RUN_INDEX.set(job.run_index)
        try:
            return await session.evaluator.run_case(case, job.split, tree)
        finally:
            RUN_INDEX.reset(token)

    result = _loop().run_until_complete(run())
    unsandboxed = getattr(getattr(session.evaluator.runner, "context", None), "unsandboxed", None)
    import ray

    node = ray.get_runtime_context().get_node_id()
    meta = {**result.output.meta, "worker": platform.node(), "ray_node": node}
    if getattr(session.evaluator.runner, "sandbox", None) == "none" and unsandboxed:
        meta[REMOTE_UNSANDBOXED] = f"on worker {platform.node()}: {unsandboxed}"
    return result.model_copy(update={"output": result.output.model_copy(update={"meta": meta})})


def probe(commands: list[str]) -> dict[str, Any]:
    """What the preflight asks of each node: versions, git, bubblewrap and which ``commands`` are missing."""
    from assay.sandbox import bwrap_status
    from assay.version import __version__

    status = bwrap_status()
    return {
        "node": platform.node(),
        "assay": __version__,
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "git": shutil.which("git") is not None,
        "bwrap": status.reason if not status.available else None,
        "missing": [c for c in commands if shutil.which(c) is None],
        "pid": os.getpid(),
    }


def runner_commands(runner: Any) -> list[str]:
    """The programs a runner's command starts (its first word, when that is a program on PATH rather than a
    file shipped with the candidate)."""
    command = getattr(runner, "command", None)
    if not command:
        return []
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    if not words or "/" in words[0] or "{" in words[0]:
        return []
    return [words[0]]
