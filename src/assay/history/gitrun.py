"""Running the git CLI: one subprocess per command, a fixed environment, one-line errors.

Every command runs with ``commit.gpgsign=false``, ``tag.gpgsign=false`` and ``core.hooksPath=/dev/null``
so the user's hooks and signing setup can neither block nor slow down assay's own commits, worktrees and
adoption merges. Variables that would redirect git to another repository (``GIT_DIR``, ``GIT_INDEX_FILE``,
...; set when assay itself runs inside a git hook) are removed, prompts are disabled and messages are in
the C locale.

Commit identity: the user's ``user.name`` / ``user.email`` (from any git config level) and any
``GIT_AUTHOR_*`` / ``GIT_COMMITTER_*`` variables already set win; whatever is still missing is filled with
``assay`` / ``assay@localhost``, so commits also work on machines where git was never configured.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from assay.errors import AssayError

DEFAULT_NAME = "assay"
DEFAULT_EMAIL = "assay@localhost"
DEFAULT_TIMEOUT = 120.0

_CONFIG = (
    "-c",
    "commit.gpgsign=false",
    "-c",
    "tag.gpgsign=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.quotePath=false",
    "-c",
    "advice.detachedHead=false",
)
_REDIRECTING_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
)
_IDENTITY_VARS = {
    "GIT_AUTHOR_NAME": ("user.name", DEFAULT_NAME),
    "GIT_COMMITTER_NAME": ("user.name", DEFAULT_NAME),
    "GIT_AUTHOR_EMAIL": ("user.email", DEFAULT_EMAIL),
    "GIT_COMMITTER_EMAIL": ("user.email", DEFAULT_EMAIL),
}


class GitError(AssayError):
    """A git command failed; the message is one line naming the command and git's last stderr line."""


def base_env() -> dict[str, str]:
    """The process environment cleaned for running git non-interactively on a known repository."""
    env = {k: v for k, v in os.environ.items() if k not in _REDIRECTING_VARS}
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0", "GIT_EDITOR": "true"})
    return env


def last_line(text: str) -> str:
    """The last ``fatal:`` / ``error:`` line (usage text may follow it), else the last non-empty line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return (errors or lines or [""])[-1]


def _render(args: Sequence[str]) -> str:
    return " ".join(shlex.quote(a) for a in ("git", *args)).replace("\n", " ")


def run_git(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float = DEFAULT_TIMEOUT,
    input: str | None = None,
    ok_codes: Sequence[int] = (0,),
) -> subprocess.CompletedProcess[str]:
    """Run ``git <args>`` in ``cwd``; raise :class:`GitError` unless the exit code is in ``ok_codes``."""
    try:
        proc = subprocess.run(
            ["git", *_CONFIG, *args],
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
            timeout=timeout,
            check=False,
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
        )
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"{_render(args)} timed out after {timeout:g}s (in {cwd})") from exc
    except (FileNotFoundError, NotADirectoryError) as exc:
        if not Path(cwd).is_dir():
            raise GitError(f"{_render(args)}: directory {cwd} does not exist") from exc
        raise GitError("git is not installed (no `git` on PATH); assay needs the git CLI") from exc
    if proc.returncode not in ok_codes:
        detail = last_line(proc.stderr) or last_line(proc.stdout) or f"exit code {proc.returncode}"
        raise GitError(f"{_render(args)} failed: {detail}")
    return proc


def identity_env(cwd: Path, env: Mapping[str, str], timeout: float = DEFAULT_TIMEOUT) -> dict[str, str]:
    """The ``GIT_AUTHOR_*`` / ``GIT_COMMITTER_*`` variables to add so a commit in ``cwd`` has an identity."""
    missing = [var for var in _IDENTITY_VARS if not env.get(var)]
    if not missing:
        return {}
    proc = run_git(
        ["config", "--get-regexp", r"^user\.(name|email)$"],
        cwd=cwd,
        env=env,
        timeout=timeout,
        ok_codes=(0, 1),
    )
    configured: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        if value.strip():
            configured[key.lower()] = value
    return {var: _IDENTITY_VARS[var][1] for var in missing if _IDENTITY_VARS[var][0] not in configured}
