"""`Git`: the repository as the memory of a run (commits, branches, refs, worktrees, diffs).

All paths given to or returned by these methods are relative to the repository's top level (not to an
artifact root inside it); see :mod:`assay.history.scope` for converting. See :mod:`assay.history.gitrun`
for the environment every command runs with (identity fallback, no hooks, no signing).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from assay.history import merge as _merge
from assay.history import worktree as _wt
from assay.history.gitrecords import LOG_FORMAT, DiffStats, LogEntry, parse_log, parse_numstat
from assay.history.gitrun import DEFAULT_TIMEOUT, GitError, base_env, identity_env, last_line, run_git
from assay.history.merge import MergeKind
from assay.history.treestatus import StatusEntry

_NOT_A_REPO = ("not a git repository", "must be run in a work tree")


class Git:
    """A git repository, addressed by its top level ``root``; every method runs the git CLI once or a few
    times (synchronously, each command bounded by ``timeout`` seconds)."""

    def __init__(self, root: Path, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.root = Path(root).resolve()
        self.timeout = timeout
        self._env = base_env()
        self._commit_env: dict[str, str] | None = None

    def __repr__(self) -> str:
        return f"Git({str(self.root)!r})"

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        input: str | None = None,
        ok_codes: Sequence[int] = (0,),
        commits: bool = False,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``git <args>`` in ``cwd`` (default: the root); ``commits=True`` adds a commit identity, ``env``
        more variables (a temporary ``GIT_INDEX_FILE``)."""
        base = self._env
        if commits:
            if self._commit_env is None:
                self._commit_env = {**self._env, **identity_env(self.root, self._env, self.timeout)}
            base = self._commit_env
        if env:
            base = {**base, **env}
        where = self.root if cwd is None else Path(cwd)
        return run_git(args, cwd=where, env=base, timeout=self.timeout, input=input, ok_codes=ok_codes)

    @classmethod
    def discover(cls, path: Path, *, timeout: float = DEFAULT_TIMEOUT) -> Git | None:
        """The repository whose work tree contains ``path`` (which need not exist yet), or None."""
        start = Path(path).resolve()
        while not start.is_dir() and start != start.parent:
            start = start.parent
        if not any(os.path.lexists(folder / ".git") for folder in (start, *start.parents)):
            # git finds a work tree by a `.git` at or above it (its variables that say otherwise are not
            # passed: base_env); without one, there is none, and starting git (20 ms) would only say so.
            return None
        proc = run_git(
            ["rev-parse", "--show-toplevel"], cwd=start, env=base_env(), timeout=timeout, ok_codes=(0, 128)
        )
        if proc.returncode != 0:
            if any(marker in proc.stderr for marker in _NOT_A_REPO):
                return None
            raise GitError(f"git rev-parse --show-toplevel failed in {start}: {last_line(proc.stderr)}")
        return cls(Path(proc.stdout.rstrip("\n")), timeout=timeout)

    @classmethod
    def init(cls, path: Path, *, initial_commit: bool = True, message: str = "assay: initial commit") -> Git:
        """``git init`` ``path`` on branch ``main``; with ``initial_commit``, commit every file not ignored by
        ``.gitignore`` (an empty commit when there is none, so that HEAD always exists). A directory that
        already has a ``.git`` is refused: use :meth:`discover` first."""
        if (Path(path) / ".git").exists():
            raise GitError(f"git init {path}: already a git repository")
        Path(path).mkdir(parents=True, exist_ok=True)
        git = cls(path)
        git.run("init", "-q", "-b", "main")
        if initial_commit:
            git.run("add", "-A")
            git.run("commit", "-q", "--allow-empty", "--no-verify", "-F", "-", input=message, commits=True)
        return git

    # -- revisions and refs -------------------------------------------------------------------------

    def head(self) -> str:
        """Full sha of HEAD in the main work tree."""
        return self.rev_parse("HEAD")

    def rev_parse(self, rev: str) -> str:
        """Full sha of the commit ``rev`` names (tags are peeled); GitError when it names none."""
        spec = f"{rev}^{{commit}}"
        proc = self.run("rev-parse", "--verify", "--quiet", "--end-of-options", spec, ok_codes=(0, 1, 128))
        if proc.returncode != 0:
            raise GitError(f"git rev-parse --verify {spec} failed: {rev!r} is not a commit in {self.root}")
        return proc.stdout.strip()

    def current_branch(self) -> str | None:
        """Short name of the branch checked out in the main work tree; None when HEAD is detached."""
        proc = self.run("symbolic-ref", "--quiet", "--short", "HEAD", ok_codes=(0, 1))
        return proc.stdout.strip() or None if proc.returncode == 0 else None

    def branch_exists(self, name: str) -> bool:
        """Whether the local branch ``name`` exists."""
        proc = self.run("show-ref", "--verify", "--quiet", f"refs/heads/{name}", ok_codes=(0, 1))
        return proc.returncode == 0

    def set_branch(self, name: str, commit: str) -> None:
        """Create branch ``name`` at ``commit`` or move it there; never checks anything out, and refuses
        (GitError) to move a branch that is checked out in any work tree."""
        self.run("branch", "--force", "--no-track", name, commit)

    def set_ref(self, ref: str, commit: str) -> None:
        """Point the full ref name ``ref`` (``refs/assay/<run>/cand-0007``) at ``commit``."""
        if not ref.startswith("refs/"):
            raise GitError(f"git update-ref: {ref!r} is not a full ref name (expected refs/...)")
        if ref.startswith("refs/heads/"):
            self.set_branch(ref.removeprefix("refs/heads/"), commit)
            return
        self.run("update-ref", "-m", "assay", ref, commit)

    def refs(self, prefix: str) -> dict[str, str]:
        """Every ref whose full name starts with ``prefix`` (``refs/assay/<run>/``), mapped to its sha."""
        hierarchy = prefix.rsplit("/", 1)[0] if "/" in prefix else prefix
        proc = self.run("for-each-ref", "--format=%(refname)%00%(objectname)", hierarchy)
        found = {}
        for line in proc.stdout.splitlines():
            name, _, sha = line.partition("\0")
            if name.startswith(prefix):
                found[name] = sha
        return found

    def delete_ref(self, ref: str) -> None:
        """Delete ``ref`` if it exists; a branch checked out in a work tree is refused (GitError)."""
        if ref.startswith("refs/heads/"):
            name = ref.removeprefix("refs/heads/")
            if self.branch_exists(name):
                self.run("branch", "-D", "-q", name)
            return
        self.run("update-ref", "-d", ref)

    # -- work trees and commits ----------------------------------------------------------------------

    def dirty_paths(self, *, ignore: Sequence[str] = (".assay",)) -> list[str]:
        """Modified, staged, deleted and untracked (not ignored) paths of the main work tree, except those
        under ``ignore`` (paths relative to the root, or absolute)."""
        return _wt.dirty_paths(self, self.root, ignore)

    def status(self) -> list[StatusEntry]:
        """What ``git status`` reports in the main work tree: changed tracked paths and every untracked file that
        is not ignored (sort them with :func:`assay.history.treestatus.sort_status`)."""
        return _wt.status_entries(self, self.root)

    def is_dirty(self, *, ignore: Sequence[str] = (".assay",)) -> bool:
        """Whether the main work tree has changes outside ``ignore`` (see :meth:`dirty_paths`)."""
        return bool(self.dirty_paths(ignore=ignore))

    def exclude_locally(self, path: Path) -> str | None:
        """Keep the folder ``path`` out of ``git status`` in this clone only: a line in ``.git/info/exclude``
        (no tracked file changes). The folder as written there (``.assay/``), or None when it lies outside the
        work tree or is ignored already."""
        try:
            rel = Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None
        if rel == "." or self.run("check-ignore", "-q", "--", f"{rel}/", ok_codes=(0, 1)).returncode == 0:
            return None
        exclude = Path(self.run("rev-parse", "--git-path", "info/exclude").stdout.strip())
        exclude = exclude if exclude.is_absolute() else self.root / exclude
        exclude.parent.mkdir(parents=True, exist_ok=True)
        text = exclude.read_text(encoding="utf-8") if exclude.is_file() else ""
        with exclude.open("a", encoding="utf-8") as handle:
            pattern = re.sub(r"([*?\[\\])", r"\\\1", rel)  # a literal name, not a glob
            handle.write(("" if not text or text.endswith("\n") else "\n") + f"/{pattern}/\n")
        return f"{rel}/"

    def add_worktree(self, path: Path, commit: str) -> None:
        """Create a detached work tree at ``path`` (must not exist, or be empty) checked out at ``commit``."""
        self.run("worktree", "add", "--force", "--detach", str(Path(path).resolve()), commit)

    def worktrees(self) -> dict[Path, str | None]:
        """Every work tree (the main one first): resolved path -> checked-out branch, None when detached."""
        return _wt.list_worktrees(self)

    def remove_worktree(self, path: Path) -> None:
        """Remove the work tree at ``path`` with its changes; a missing or half-created one is cleaned up."""
        _wt.remove_worktree(self, Path(path))

    def reset_worktree(self, path: Path, commit: str) -> None:
        """Make the work tree at ``path`` exactly ``commit``: hard reset, then delete every untracked and
        ignored file (``clean -ffdx``)."""
        self.run("reset", "-q", "--hard", commit, cwd=Path(path))
        self.run("clean", "-q", "-ffdx", cwd=Path(path))

    def commit_all(self, worktree: Path, message: str) -> str | None:
        """Stage everything in ``worktree`` (``add -A``) and commit; the new sha, or None if nothing changed."""
        where = Path(worktree)
        self.run("add", "-A", cwd=where)
        if self.run("diff", "--cached", "--quiet", cwd=where, ok_codes=(0, 1)).returncode == 0:
            return None
        self.run("commit", "-q", "--no-verify", "-F", "-", cwd=where, input=message, commits=True)
        return self.run("rev-parse", "HEAD", cwd=where).stdout.strip()

    def commit_paths(self, paths: Sequence[str], message: str) -> str | None:
        """Commit ``paths`` (relative to the root) of the main work tree as they are, and nothing else that may
        be staged; the new sha, or None when they hold no change."""
        if not paths:
            return None
        self.run("--literal-pathspecs", "add", "--", *paths)
        if (
            self.run(
                "--literal-pathspecs", "diff", "--cached", "--quiet", "--", *paths, ok_codes=(0, 1)
            ).returncode
            == 0
        ):
            return None
        self.run(
            "--literal-pathspecs",
            "commit",
            "-q",
            "--no-verify",
            "-F",
            "-",
            "--",
            *paths,
            input=message,
            commits=True,
        )
        return self.head()

    def set_note(self, commit: str, text: str, *, attempts: int = 3) -> None:
        """Make ``text`` the git note of ``commit`` (replacing one it had): ``git log`` shows it under the
        commit's message. A candidate is committed before it is judged, so its verdict can only follow as a
        note. The notes ref is the repository's, shared: a writer holding its lock is waited for a little, then
        GitError."""
        for attempt in range(attempts):
            try:
                self.run("notes", "add", "-f", "-F", "-", commit, input=text, commits=True)
                return
            except GitError:
                if attempt == attempts - 1:
                    raise
                time.sleep(0.1 * (attempt + 1))

    def restore_paths(self, worktree: Path, commit: str, paths: Sequence[str]) -> None:
        """Put ``paths`` in the work tree (and its index) back as they are at ``commit``; a path that does not
        exist there is deleted."""
        _wt.restore_paths(self, Path(worktree), commit, paths)

    # -- history -------------------------------------------------------------------------------------

    def changed_files(self, a: str, b: str) -> list[str]:
        """Paths that differ between commits ``a`` and ``b`` (a rename lists the old and the new path)."""
        proc = self.run("diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", a, b, "--")
        return [p for p in proc.stdout.split("\0") if p]

    def commit_files(self, commit: str) -> list[str]:
        """The paths ``commit`` added, changed or deleted (every file of a root commit)."""
        proc = self.run(
            "diff-tree", "--root", "--no-commit-id", "--no-renames", "-r", "--name-only", "-z", commit
        )
        return [p for p in proc.stdout.split("\0") if p]

    def diff_stats(self, a: str, b: str) -> DiffStats:
        """Files changed, lines inserted and deleted from ``a`` to ``b`` (renames detected, binaries counted)."""
        return parse_numstat(self.run("diff", "--numstat", "-z", "-M", "--no-ext-diff", a, b, "--").stdout)

    def diff(self, a: str, b: str, paths: Sequence[str] = ()) -> str:
        """Unified diff from ``a`` to ``b``, limited to ``paths`` when given."""
        args = ["--literal-pathspecs", "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M"]
        return self.run(*args, "--src-prefix=a/", "--dst-prefix=b/", a, b, "--", *paths).stdout

    def show_file(self, commit: str, path: str) -> str | None:
        """Content of ``path`` at ``commit``; None when the file does not exist there."""
        proc = self.run("cat-file", "blob", f"{commit}:{path}", ok_codes=(0, 128))
        if proc.returncode == 0:
            return proc.stdout
        self.rev_parse(commit)
        return None

    def log(self, rev: str, max_count: int = 50) -> list[LogEntry]:
        """The newest ``max_count`` commits reachable from ``rev`` (or in a range such as ``a..b``)."""
        args = ["log", "-z", "--no-color", "--no-show-signature", f"--format={LOG_FORMAT}"]
        return parse_log(self.run(*args, f"--max-count={max_count}", rev, "--").stdout)

    def merge_into(
        self,
        branch: str,
        commit: str,
        *,
        message: str | None = None,
        ignore: Sequence[str] = (".assay",),
        notify: Callable[[str], None] | None = None,
    ) -> MergeKind:
        """Adopt ``commit`` into ``branch``: fast-forward when possible, else a merge commit ("up-to-date"
        when ``branch`` already contains it), built in a temporary work tree; the branch moves in one step
        at the end, so a process killed before leaves it as it was. When ``branch`` is checked out in a work
        tree, that tree moves with it (``git merge --ff-only``, never a merge in progress) and is refused
        (GitError) if it has changes outside ``ignore``; a conflicting merge fails (GitError) and leaves
        everything as it was. What an earlier adopt that was killed left is cleaned up first (one line to
        ``notify`` for each thing done); a merge in progress that assay did not start, or a git lock file,
        is refused (see :mod:`assay.history.recover`)."""
        return _merge.merge_into(self, branch, commit, message=message, ignore=ignore, notify=notify)
