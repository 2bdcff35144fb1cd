"""The ``agent`` proposer: an agent CLI (``claude -p "$(cat {view_file})"``, ``codex exec ...``) run in the
worktree, with the proposer view written to ``.assay-proposal.md`` there for it to read.

The agent edits files itself. It runs under the sandbox (own process group, time limit, scrubbed environment;
``env_allow`` passes its own API key through). The view file is removed afterwards, whatever happened.
An agent can read files, so ``hide`` names worktree paths (case files, ``assay.yaml``) that are moved out of
the worktree while it runs and put back afterwards; this is not a file-system sandbox.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from assay.fsutil import atomic_write_text
from assay.proposers.base import PROPOSERS, Proposal, Proposer, ProposerView
from assay.proposers.edits import is_editable
from assay.proposers.llm import match_citations, one_line
from assay.proposers.prompt import render_prompt
from assay.sandbox import SandboxLimits, decode_output, describe_exit, run_process, scrubbed_env

VIEW_FILE = ".assay-proposal.md"
_CITES = re.compile(r"^\**CITES?\**:\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", ".assay"}


def snapshot(worktree: Path, editable: Sequence[str]) -> dict[str, bytes]:
    """The content of every editable file under ``worktree`` (the view file excluded)."""
    files: dict[str, bytes] = {}
    for root, dirs, names in os.walk(worktree):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
        for name in names:
            path = Path(root, name)
            rel = path.relative_to(worktree).as_posix()
            if rel != VIEW_FILE and is_editable(rel, editable) and path.is_file():
                files[rel] = path.read_bytes()
    return files


@contextlib.contextmanager
def hidden(worktree: Path, patterns: Sequence[str]) -> Iterator[None]:
    """Move the files and folders matching ``patterns`` (paths or globs) out of ``worktree`` for the
    duration; put them back afterwards, replacing whatever the agent left at their places."""
    moved: list[tuple[Path, Path]] = []
    stash = Path(tempfile.mkdtemp(prefix="assay-hidden-"))
    try:
        for pattern in patterns:
            relative = pattern.strip().removeprefix("./")
            if not relative or Path(relative).is_absolute() or ".." in Path(relative).parts:
                continue
            for path in sorted(worktree.glob(relative)):
                if path.exists() and path.resolve().is_relative_to(worktree.resolve()):
                    target = stash / str(len(moved))
                    shutil.move(path, target)
                    moved.append((path, target))
        yield
    finally:
        for path, target in reversed(moved):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(target, path)
        shutil.rmtree(stash, ignore_errors=True)


@PROPOSERS.register("agent")
class AgentProposer(Proposer):
    """Runs ``command`` (``{view_file}`` is replaced by the shell-quoted path of the view file, which is
    also in ``ASSAY_VIEW_FILE``) in the worktree, with the ``hide`` paths moved away. The description is
    the first line of its stdout (or "agent edit"); ``CITES:`` lines in its stdout are recorded as
    citations. A failed run or a run that changed no editable file is a failed proposal."""

    name = "agent"

    def __init__(
        self,
        command: str,
        timeout: float = 600.0,
        *,
        env_allow: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        hide: Sequence[str] = (),
        memory_mb: int | None = None,
        max_output_bytes: int = 2_000_000,
    ) -> None:
        self.command = command
        self.env = dict(env or {})
        self.hide = list(hide)
        self.limits = SandboxLimits(
            timeout_s=timeout,
            max_output_bytes=max_output_bytes,
            memory_mb=memory_mb,
            env_allow=tuple(env_allow),
        )

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        """Run the agent once in ``worktree``; see the class docstring."""
        view_file = worktree / VIEW_FILE
        atomic_write_text(view_file, render_prompt(view, format="direct"))
        try:
            before = snapshot(worktree, editable)
            command = self.command.replace("{view_file}", shlex.quote(str(view_file)))
            env = scrubbed_env(self.limits.env_allow, extra={**self.env, "ASSAY_VIEW_FILE": str(view_file)})
            with hidden(worktree, self.hide):
                result = await run_process(command, cwd=worktree, limits=self.limits, env=env)
        finally:
            view_file.unlink(missing_ok=True)
        stdout, _ = decode_output(result.stdout)
        first = next((line for line in stdout.splitlines() if line.strip()), "")
        description = one_line(re.sub(r"^\**DESCRIPTION\**:\s*", "", first.strip())) or "agent edit"
        cited = [c.strip("`'\" ") for m in _CITES.finditer(stdout) for c in re.split(r"[,\s]+", m.group(1))]
        citations = match_citations([c for c in cited if c], view.trace_paths)
        error = None
        if result.error is not None:
            error = f"agent failed: {result.error}"
        elif result.exit_code:
            stderr, _ = decode_output(result.stderr)
            last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
            error = f"agent failed: {describe_exit(result.exit_code)}" + (f": {last}" if last else "")
        elif snapshot(worktree, editable) == before:
            error = "the agent changed no editable file"
        if error is not None:
            return Proposal(
                ok=False, description=description, error=one_line(error, 300), citations=citations
            )
        return Proposal(ok=True, description=description, citations=citations)
