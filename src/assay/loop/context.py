"""What the loop's steps work with and never change while a run goes on: the configuration, git, the run's
files and log, the worktree, the cases, the measurer, the proposer, the parent selector, the judges, the
gate, the clock and the reporter. State is elsewhere (:mod:`assay.loop.state`); :meth:`LoopContext.emit` is how
a step changes it: the event is logged, then folded."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from assay.config import AssayConfig
from assay.errors import ConfigError
from assay.evaluation.key_redactor import key_redactor
from assay.evaluation.session import in_config, select_cases
from assay.extensions import (
    CHECK,
    EXECUTOR,
    GATE,
    PAIRWISE_JUDGE,
    PARENT_SELECTOR,
    PROPOSER,
    RATING_BACKEND,
    RUNNER,
    conform,
    pick,
    resolve,
)
from assay.fsutil import BOM, artifact_text
from assay.gates import Gate
from assay.gates.factory import is_paired
from assay.history.git import Git
from assay.history.records import RunRecord
from assay.history.runfiles import RunFiles
from assay.history.scope import artifact_files, out_of_scope
from assay.history.store import RunStore
from assay.loop.events import Event
from assay.loop.measure import Measurer
from assay.loop.noise import NoiseSampler, sequential_options
from assay.loop.runlog import RunLog
from assay.loop.state import LoopState, apply
from assay.model import Case, Split
from assay.presets import EvolveSettings
from assay.proposers import Proposer
from assay.proposers.fingerprint import content_size as content_size_of
from assay.proposers.fingerprint import fingerprint
from assay.proposers.redaction import Redactor
from assay.ratings import make_rating
from assay.registry import Family, UnknownName
from assay.search import ParentSelector, SearchError
from assay.stats import NoiseEstimate
from assay.stopping import STOP_RULE, StopRule
from assay.tournament import PairwiseJudge


class ArtifactIdentity(NamedTuple):
    """An artifact's size in bytes, the size of what it says (comments and formatting aside), the hash of its
    exact bytes and its fingerprint."""

    size: int
    content_size: int
    content: str
    tree: str


class Clock:
    """The run's running time: what earlier sessions logged plus this session's time since it started."""

    def __init__(self, offset: float = 0.0) -> None:
        self.offset = offset
        self.started = time.monotonic()

    def now(self) -> float:
        return self.offset + time.monotonic() - self.started


@dataclass
class Parts:
    """The run-independent parts, built (and their configuration errors raised) before a run is created."""

    config: AssayConfig
    settings: EvolveSettings
    max_generations: int
    git: Git
    prefix: str
    store: RunStore
    cases: dict[Split, list[Case]]
    redactor: Redactor
    measurer: Measurer
    proposer: Proposer
    selector: ParentSelector
    pairwise_judge: PairwiseJudge
    gate: Gate | None = None  # an object given through the Python API; else from the configuration
    stop_rules: list[StopRule] = field(default_factory=list)

    def unsandboxed(self) -> dict[str, str]:
        """What runs without the jail in this session, and why: ``runner`` (the cases) and ``proposer``."""
        found: dict[str, str] = {}
        runner = self.measurer.evaluator.runner
        if runner.sandbox == "none":
            found["runner"] = runner.context.unsandboxed or "runner.sandbox is none"
        reason = getattr(self.proposer, "unsandboxed", None)
        if isinstance(reason, str):
            found["proposer"] = reason
        return found


@dataclass(frozen=True)
class Given:
    """The parts given through the Python API (:func:`assay.evolve`), each an object — checked, and used as it
    is whatever assay.yaml says — or a registered name, built as assay.yaml would build it; None: the configured
    one. ``checks`` maps a check type to an object (used for every check of that type) or a class (built with
    each check's spec)."""

    proposer: object = None
    gate: object = None
    search: object = None
    judge: object = None
    stop_rules: tuple[object, ...] = ()
    runner: object = None
    executor: object = None
    ratings: object = None
    checks: Mapping[str, object] = field(default_factory=dict)

    def checked(self) -> Given:
        """Every object here checked against its family now, before anything runs (names are resolved when
        the run's parts are built)."""
        parts: list[tuple[Family[Any], object]] = [
            (PROPOSER, self.proposer),
            (GATE, self.gate),
            (PARENT_SELECTOR, self.search),
            (PAIRWISE_JUDGE, self.judge),
            (RUNNER, self.runner),
            (EXECUTOR, self.executor),
            (RATING_BACKEND, self.ratings),
            *((STOP_RULE, rule) for rule in self.stop_rules),
            *((CHECK, check) for check in self.checks.values() if not isinstance(check, type)),
        ]
        for family, part in parts:
            if part is not None and not isinstance(part, str):
                conform(family, part)
        return self


def build_parts(
    config: AssayConfig,
    settings: EvolveSettings,
    max_generations: int,
    *,
    git: Git,
    store: RunStore,
    use_cache: bool = True,
    given: Given | None = None,
) -> Parts:
    """Load and split the cases, build the runner, judge and proposer (errors name assay.yaml); a part ``given``
    through the Python API is used instead of the configured one."""
    given = given or Given()
    selection = select_cases(config, "all")
    cases = {s: [c for c, cs in selection.cases if cs == s] for s in Split}
    dev = [c for c, split in selection.cases if split == Split.DEV]
    redactor = key_redactor(config, dev, cases[Split.HOLDOUT] + cases[Split.REGRESSION])
    evolve = config.evolve
    with in_config(config):
        measurer = Measurer(
            config,
            cases,
            use_cache=use_cache,
            judge_votes=settings.judge_votes,
            runner=given.runner,  # type: ignore[arg-type]
            executor=given.executor,  # type: ignore[arg-type]
            checks=given.checks,
        )
        made = pick(PROPOSER, given.proposer, evolve.proposer.type, config, use_cache=use_cache)
        try:
            chosen = pick(PARENT_SELECTOR, given.search, evolve.search, **evolve.search_options)
        except (SearchError, TypeError, UnknownName) as exc:
            raise ConfigError(str(exc), file=config.path, field="evolve.search") from None
        pairwise_judge = pick(
            PAIRWISE_JUDGE,
            given.judge,
            evolve.tournament.judge,
            config,
            redactor=redactor,
            use_cache=use_cache,
        )
        try:
            make_rating(given.ratings or evolve.tournament.rating)  # type: ignore[arg-type]
        except UnknownName as exc:
            raise ConfigError(str(exc), file=config.path, field="evolve.tournament.rating") from None
        rules = [pick(STOP_RULE, rule, "") for rule in given.stop_rules]
    gate = given.gate if given.gate is not None and not isinstance(given.gate, str) else None
    selector = given.search if given.search is not None and not isinstance(given.search, str) else None
    judge = given.judge if given.judge is not None and not isinstance(given.judge, str) else None
    evolve = config.evolve
    if evolve.gate_input == "tournament" and (
        not evolve.tournament.enabled or evolve.gate not in ("backpressure", "trend") or gate is not None
    ):
        raise ConfigError(
            "a gate fed by the tournament (autocontext's wiring) is `gate: backpressure` or `trend` with the"
            " tournament enabled",
            file=config.path,
            field="evolve.gate_input",
        )
    if evolve.screening == "judge" and (
        not evolve.tournament.enabled or (evolve.tournament.judge != "llm" and judge is None)
    ):
        raise ConfigError(
            "judge-first screening compares candidates before they are evaluated, on their files: it needs the"
            " tournament with `judge: llm` (or a judge given through the Python API)",
            file=config.path,
            field="evolve.screening",
        )
    if evolve.parallel_candidates > 1 and (
        (evolve.search == "greedy" and selector is None) or evolve.screening == "judge"
    ):
        raise ConfigError(
            "candidates measured at once take proposals made ahead from the archive, before the judge could"
            " screen them: set `evolve.search: ranked` (or dgm) and `evolve.screening: none`, or"
            " `evolve.parallel_candidates: 1`",
            file=config.path,
            field="evolve.parallel_candidates",
        )
    if config.evolve.pipeline_depth > 1 and config.evolve.search == "greedy" and selector is None:
        raise ConfigError(
            "a pipeline of proposals needs a search that samples parents from the archive; "
            "set `evolve.search: ranked` (or dgm), or `evolve.pipeline: 1`",
            file=config.path,
            field="evolve.pipeline",
        )
    prefix = config.artifact_dir.relative_to(git.root).as_posix() if config.artifact_dir != git.root else ""
    return Parts(
        config=config,
        settings=settings,
        max_generations=max_generations,
        git=git,
        prefix=prefix,
        store=store,
        cases=cases,
        redactor=redactor,
        measurer=measurer,
        proposer=made,
        selector=chosen,
        pairwise_judge=pairwise_judge,
        gate=conform(GATE, gate) if gate is not None else None,
        stop_rules=rules,
    )


@dataclass
class LoopContext:
    """The parts and one run's files, log, worktrees and clock (see the module docstring)."""

    parts: Parts
    run: RunRecord
    files: RunFiles
    log: RunLog
    worktree: Path
    noise: NoiseSampler
    clock: Clock
    report: Callable[[str], None]
    interrupted: bool = False
    # The reason of a stop rule met with the best still to tidy: proposals from now on only tidy the best, then
    # the run ends with this reason (see engine._loop).
    tidying: str | None = None
    on_event: Callable[[LoopState], None] | None = None  # called after each event is folded
    file_cache: dict[str, dict[str, str]] = field(default_factory=dict)
    _gates: dict[bool, tuple[Gate, bool]] = field(default_factory=dict)

    @property
    def config(self) -> AssayConfig:
        return self.parts.config

    @property
    def git(self) -> Git:
        return self.parts.git

    @property
    def workdir(self) -> Path:
        """The artifact root inside the run's worktree."""
        return self.workdir_in(self.worktree)

    def workdir_in(self, worktree: Path) -> Path:
        """The artifact root inside ``worktree``."""
        return worktree / self.parts.prefix if self.parts.prefix else worktree

    def emit(self, state: LoopState, event: Event) -> None:
        """Log ``event`` (with the run's running time) and fold it into ``state``."""
        event = event.model_copy(update={"elapsed": self.clock.now()})
        self.log.append(event)
        apply(state, event)
        if self.on_event is not None:
            self.on_event(state)

    def gate_for(self, estimate: NoiseEstimate | None) -> tuple[Gate, bool]:
        """The gate and whether it is the paired one (built once per kind of baseline noise)."""
        noisy = estimate is not None and not estimate.deterministic
        if noisy not in self._gates:
            evolve = self.config.evolve
            gate = self.parts.gate or resolve(
                GATE,
                evolve.gate,
                self.parts.settings.gate_options,
                noisy=noisy,
                sequential=sequential_options(self.config),
            )
            self._gates[noisy] = (gate, is_paired(gate))
        return self._gates[noisy]

    def artifact_paths(self, workdir: Path) -> list[str]:
        return artifact_files(workdir, self.config.artifact.paths, forbid=self.config.artifact.forbid)

    def artifact_bytes(self, workdir: Path) -> dict[str, bytes]:
        """The artifact files under ``workdir`` (relative path -> bytes)."""
        return {p: (workdir / p).read_bytes() for p in self.artifact_paths(workdir)}

    def artifact_texts(self, workdir: Path) -> dict[str, str]:
        """The artifact files under ``workdir`` (relative path -> text, as :func:`~assay.fsutil.artifact_text` reads it)."""
        return {p: artifact_text(data) for p, data in self.artifact_bytes(workdir).items()}

    def tree(self, workdir: Path) -> str:
        """The artifact's fingerprint: equal for candidates that differ only in formatting or comments."""
        return fingerprint(self.artifact_texts(workdir))

    def artifact_identity(self, workdir: Path) -> ArtifactIdentity:
        """The artifact's sizes, its content hash (exact bytes) and its fingerprint (:meth:`tree`), from one
        read of its files."""
        digest = hashlib.sha256()
        texts: dict[str, str] = {}
        size = 0
        for path in self.artifact_paths(workdir):
            data = (workdir / path).read_bytes()
            size += len(data)
            digest.update(path.encode() + b"\0" + data)
            texts[path] = artifact_text(data)
        content_size = sum(content_size_of(path, text) for path, text in texts.items())
        return ArtifactIdentity(size, content_size, digest.hexdigest(), fingerprint(texts))

    def files_at(self, commit: str) -> dict[str, str]:
        """The artifact files of a commit (path relative to the artifact root -> text), for a judge."""
        prefix = self.parts.prefix
        listed = self.git.run("ls-tree", "-r", "--name-only", commit, "--", prefix or ".").stdout
        found: dict[str, str] = {}
        for path in listed.splitlines():
            if out_of_scope(
                [path], self.config.artifact.paths, self.config.artifact.forbid, artifact_prefix=prefix
            ):
                continue
            text = self.git.show_file(commit, path)  # universal newlines already
            if text is not None:
                found[path[len(prefix) + 1 :] if prefix else path] = text.removeprefix(BOM)
        return found
