"""The ``agent`` proposer: an agent CLI (``claude -p "$(cat {view_file})"``, ``codex exec ...``) run in a jail on
its own copy of the editable files, with the proposer view in ``.assay-proposal.md`` there.

For each proposal assay makes a workspace outside the project (in the system's temporary directory):
``work/`` holds a copy of the editable files of the candidate's worktree, in a fresh git repository with one
commit (no history that could hold a case), and the view file; ``traces/`` holds copies of the redacted trace
files the view names. The agent runs in the jail (:mod:`assay.sandbox.jail`): ``work/`` is all it can write,
``traces/`` it can read, and besides only read-only system directories, the Python and ``PATH`` directories,
``home_ro`` (its login, e.g. ``~/.claude``), a private /tmp and $HOME — never the project, the run directory
or another process's /proc. The network is on when ``network`` is (an agent needs its model API).

Its changes come back as a diff that assay applies to the worktree: new and changed regular files are written,
deleted editable files removed; symlinks and special files are not taken back. Edits outside the editable
paths are reverted and flagged by the loop, as for any proposer. Without bubblewrap the agent proposer refuses
to start unless ``allow_unsandboxed``; it then runs the agent on the same copy, but unjailed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import re
import shlex
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from assay.config import AssayConfig
from assay.errors import ConfigError
from assay.fsutil import atomic_write_bytes, atomic_write_text
from assay.proposers.base import PROPOSERS, Proposal, Proposer, ProposerView
from assay.proposers.edits import is_editable
from assay.proposers.llm import match_citations, one_line
from assay.proposers.prompt import render_prompt
from assay.sandbox import (
    Jail,
    SandboxLimits,
    bwrap_status,
    decode_output,
    describe_exit,
    interpreter_paths,
    path_dirs,
    run_process,
    scrubbed_env,
)

VIEW_FILE = ".assay-proposal.md"
_CITES = re.compile(r"^\**CITES?\**:\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", ".assay"}
MAX_FILES = 2000
MAX_BYTES = 64 * 2**20

File = tuple[bytes, bool]  # content, executable


class TooMuch(Exception):
    """The agent left more files or bytes in its copy than assay takes back."""


def snapshot(
    root: Path, editable: Sequence[str] | None = None, *, others: list[str] | None = None
) -> dict[str, File]:
    """The regular files under ``root`` (only the ``editable`` ones when given; the view file, ``.git`` and
    tool folders excluded): path -> (content, executable). Symlinks and special files are left out (and listed
    in ``others``). Raises TooMuch past MAX_FILES or MAX_BYTES."""
    files: dict[str, File] = {}
    total = 0
    for current, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not Path(current, d).is_symlink()]
        for name in names:
            path = Path(current, name)
            rel = path.relative_to(root).as_posix()
            if rel == VIEW_FILE or (editable is not None and not is_editable(rel, editable)):
                continue
            info = path.lstat()
            if not stat.S_ISREG(info.st_mode):
                if others is not None:
                    others.append(rel)
                continue
            total += info.st_size
            if len(files) >= MAX_FILES or total > MAX_BYTES:
                raise TooMuch(f"more than {MAX_FILES} files or {MAX_BYTES // 2**20} MB")
            files[rel] = (path.read_bytes(), bool(info.st_mode & 0o111))
    return files


def _write(root: Path, rel: str, file: File) -> bool:
    """Write ``file`` at ``root/rel`` without following a symlink anywhere below ``root``; False if refused."""
    target = root
    for part in Path(rel).parts[:-1]:
        target = target / part
        if target.is_symlink():
            return False
        if target.exists() and not target.is_dir():
            target.unlink()
    target = root / rel
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
    atomic_write_bytes(target, file[0])
    target.chmod(0o755 if file[1] else 0o644)
    return True


def _fresh_repository(work: Path) -> None:
    """A git repository in ``work`` with one commit of its files (agents such as codex want one)."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(work.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    steps = (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=assay", "-c", "user.email=assay@localhost", "commit", "-qm", "the artifact"],
    )
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        for step in steps:
            subprocess.run(step, cwd=work, env=env, capture_output=True, timeout=60, check=True)


def _prepare(workspace: Path, files: Mapping[str, File], trace_paths: Sequence[str]) -> list[str]:
    """Fill the workspace: ``work/`` with ``files`` (in a fresh repository), ``traces/`` with copies of the
    trace files; returns the copies' paths, in order."""
    work = workspace / "work"
    work.mkdir()
    for rel, file in files.items():
        _write(work, rel, file)
    _fresh_repository(work)
    traces = workspace / "traces"
    traces.mkdir()
    copies = []
    for path in trace_paths:
        copy = traces / Path(path).name
        with contextlib.suppress(OSError):
            shutil.copyfile(path, copy)
        copies.append(str(copy))
    return copies


@PROPOSERS.register("agent")
class AgentProposer(Proposer):
    """Runs ``command`` (``{view_file}`` is replaced by the shell-quoted path of the view file, which is also
    in ``ASSAY_VIEW_FILE``) in its copy of the editable files, in the jail (see the module docstring). The
    description is the first line of its stdout (or "agent edit"); ``CITES:`` lines in its stdout are recorded
    as citations. A failed run or a run that changed no editable file is a failed proposal.

    ``home_ro``: files and directories the agent may read (its login, its tools). ``protected``: directories
    never shown even when a readable path contains them (the project, the repository, the run data).
    Raises ConfigError when bubblewrap cannot run here and ``allow_unsandboxed`` is false."""

    name = "agent"

    def __init__(
        self,
        command: str,
        timeout: float = 600.0,
        *,
        env_allow: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        memory_mb: int | None = None,
        max_output_bytes: int = 2_000_000,
        home_ro: Sequence[str | Path] = (),
        network: bool = True,
        allow_unsandboxed: bool = False,
        protected: Sequence[Path] = (),
    ) -> None:
        self.command = command
        self.env = dict(env or {})
        self.limits = SandboxLimits(
            timeout_s=timeout,
            max_output_bytes=max_output_bytes,
            memory_mb=memory_mb,
            env_allow=tuple(env_allow),
        )
        self.home_ro = [Path(p).expanduser() for p in home_ro]
        self.network = network
        self.protected = tuple(protected)
        status = bwrap_status()
        self.unsandboxed = None if status.available else status.reason
        if self.unsandboxed is not None and not allow_unsandboxed:
            raise ConfigError(
                f"the agent proposer runs in a sandbox, but {self.unsandboxed}; or set "
                "`allow_unsandboxed: true` to run the agent without one (it could then read the cases)",
                field="evolve.proposer.allow_unsandboxed",
            )

    @classmethod
    def from_config(cls, config: AssayConfig, *, use_cache: bool = True) -> AgentProposer:
        """The proposer ``proposer: {type: agent, command: ...}`` names. The agent works on a copy outside the
        project; the project, its repository and the run data stay out of its jail even where a readable path
        (a ``home_ro`` entry, a PATH directory) would show them."""
        spec = config.evolve.proposer
        if spec.command is None:
            raise ConfigError(
                "the agent proposer needs its command: set `proposer: {type: agent, command: ...}`",
                file=config.path,
                field="evolve.proposer.command",
            )
        base = config.base_dir.resolve()
        repository = [p for p in (base, *base.parents) if (p / ".git").exists()][:1]
        try:
            return cls(
                spec.command,
                timeout=spec.timeout,
                env_allow=spec.env_allow,
                env=spec.env,
                home_ro=spec.home_ro,
                network=spec.network,
                allow_unsandboxed=spec.allow_unsandboxed,
                protected=[base, config.data_path, *repository],
            )
        except ConfigError as exc:
            raise ConfigError(exc.message, file=config.path, field=exc.field) from None

    def jail(self, workspace: Path, env: Mapping[str, str]) -> Jail | None:
        """The agent's jail for one workspace (None when it runs unsandboxed)."""
        if self.unsandboxed is not None:
            return None
        return Jail(
            writable=(workspace / "work",),
            readable=(workspace / "traces", *interpreter_paths(), *path_dirs(env), *self.home_ro),
            protected=self.protected,
            network=self.network,
        )

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        """Run the agent once on a copy of ``worktree``'s editable files and apply its changes there."""
        workspace = Path(tempfile.mkdtemp(prefix="assay-agent-"))
        try:
            return await self._propose(view, worktree, editable, workspace)
        finally:
            shutil.rmtree(workspace, ignore_errors=True)

    async def _propose(
        self, view: ProposerView, worktree: Path, editable: list[str], workspace: Path
    ) -> Proposal:
        before = snapshot(worktree, editable)
        copies = await asyncio.to_thread(_prepare, workspace, before, view.trace_paths)
        work = workspace / "work"
        view_file = work / VIEW_FILE
        shown = dataclasses.replace(view, trace_paths=copies)
        atomic_write_text(view_file, render_prompt(shown, format="direct"))
        command = self.command.replace("{view_file}", shlex.quote(str(view_file)))
        env = scrubbed_env(self.limits.env_allow, extra={**self.env, "ASSAY_VIEW_FILE": str(view_file)})
        result = await run_process(
            command, cwd=work, limits=self.limits, env=env, jail=self.jail(workspace, env)
        )
        stdout, _ = decode_output(result.stdout)
        first = next((line for line in stdout.splitlines() if line.strip()), "")
        description = one_line(re.sub(r"^\**DESCRIPTION\**:\s*", "", first.strip())) or "agent edit"
        cited = [c.strip("`'\" ") for m in _CITES.finditer(stdout) for c in re.split(r"[,\s]+", m.group(1))]
        matched = match_citations([c for c in cited if c], copies)
        citations = [view.trace_paths[copies.index(path)] for path in matched]

        def failed(error: str) -> Proposal:
            return Proposal(
                ok=False, description=description, error=one_line(error, 300), citations=citations
            )

        if result.error is not None:
            return failed(f"agent failed: {result.error}")
        if result.exit_code:
            stderr, _ = decode_output(result.stderr)
            last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
            return failed(f"agent failed: {describe_exit(result.exit_code)}" + (f": {last}" if last else ""))
        others: list[str] = []
        try:
            after = snapshot(work, others=others)
        except TooMuch as exc:
            return failed(f"the agent left {exc} in its copy")
        links = [rel for rel in others if rel in before or is_editable(rel, editable)]
        if links:
            return failed(
                f"the agent left {', '.join(links[:3])} as a symlink or special file; only files count"
            )
        changed = {rel: file for rel, file in after.items() if before.get(rel) != file}
        deleted = [rel for rel in before if rel not in after]
        if not any(is_editable(rel, editable) for rel in [*changed, *deleted]):
            return failed("the agent changed no editable file")
        refused = [rel for rel, file in sorted(changed.items()) if not _write(worktree, rel, file)]
        for rel in deleted:
            with contextlib.suppress(FileNotFoundError):
                (worktree / rel).unlink()
        if refused:
            return failed(
                f"the agent's change could not be applied: {', '.join(refused)} lies under a symlink"
            )
        touched = sorted([*changed, *deleted])
        return Proposal(
            ok=True, description=description, citations=citations, operator="agent", sites=touched
        )
