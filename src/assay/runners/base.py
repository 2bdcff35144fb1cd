"""The runner contract: produce an Output for (artifact, case), never raise for the case's sake."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from assay.model import Case, Output
from assay.registry import Family, Registry, built_from
from assay.sandbox.jail import WorkdirJail

if TYPE_CHECKING:
    from assay.sandbox.workers import JailWorkers


@dataclass
class RunContext:
    """What every runner may need beyond its own config: the artifact directory, the project (config)
    directory, the LLM cache directory and whether the cache is used. ``artifact_paths`` are the editable
    paths (globs relative to the artifact directory) from ``artifact.paths``. ``jail`` is the candidates' jail
    (``runner.sandbox``); without one, ``unsandboxed`` says why a runner that starts processes runs them as
    plain processes."""

    artifact_dir: Path
    project_dir: Path
    cache_dir: Path | None = None
    use_cache: bool = True
    artifact_paths: list[str] = field(default_factory=list)
    jail: WorkdirJail | None = None
    unsandboxed: str | None = None


class Runner(ABC):
    """Turns the artifact plus one case into an Output. ``workdir`` is the artifact directory or a candidate
    worktree; files the runner writes there are visible to ``file_exists`` checks."""

    name: ClassVar[str]
    io_bound: ClassVar[bool] = False
    # The long-lived jails a runner that starts processes runs its jailed cases in.
    workers: JailWorkers | None = None

    def __init__(self, config: Any, context: RunContext) -> None:
        self.config = config
        self.context = context

    @abstractmethod
    async def run(self, case: Case, workdir: Path) -> Output: ...

    @property
    def sandbox(self) -> str | None:
        """``strict`` (cases run in the jail), ``none`` (as plain processes) or None (no process is started)."""
        if self.context.jail is not None:
            return "strict"
        return "none" if self.context.unsandboxed is not None else None

    def default_concurrency(self) -> int:
        """A sensible default: many in flight for I/O-bound runners, about the core count for processes."""
        return 32 if self.io_bound else max(2, os.cpu_count() or 2)

    async def release(self, workdir: Path) -> None:
        """The evaluation of ``workdir`` (a candidate) ended: stop the jails that ran its cases (the next
        evaluation surveys it afresh)."""
        if self.context.jail is not None:
            self.context.jail.forget(workdir)
        if self.workers is not None:
            await self.workers.close(workdir)

    async def aclose(self) -> None:
        """Release clients and pools (the jail workers by default)."""
        if self.context.jail is not None:
            self.context.jail.forget()
        if self.workers is not None:
            await self.workers.close()


@runtime_checkable
class RunnerProtocol(Protocol):
    """Turns the artifact plus one case into an Output, never raising for the case's sake.

    Optional: ``sandbox`` (default None: it starts no process), ``default_concurrency()``,
    ``async release(workdir)`` and ``async aclose()`` (default: nothing to release), ``io_bound``."""

    async def run(self, case: Case, workdir: Path) -> Output:
        """The output of the artifact in ``workdir`` on ``case``."""
        ...


async def _holds_nothing(self: Runner, *workdir: Path) -> None:
    """``release`` and ``aclose`` of a runner of another class that has none: it holds no jail of assay's."""


RUNNERS: Registry[type[Runner]] = Registry("runner type")
RUNNER: Family[Runner] = Family(
    "runner",
    RunnerProtocol,
    Runner,
    ("name", "io_bound", "sandbox", "default_concurrency", "release", "aclose", "context", "workers"),
    # The base's sandbox, release and aclose read a RunContext an object of another class need not have.
    defaults={"sandbox": None, "release": _holds_nothing, "aclose": _holds_nothing},
    registry=RUNNERS,
    build=built_from(RUNNERS),
)
