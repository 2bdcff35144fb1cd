"""The jail: a bubblewrap (``bwrap``) sandbox for untrusted processes — candidates and agent proposers.

A jailed process runs in its own user, PID, mount, IPC, UTS and cgroup namespaces (and network namespace,
unless ``network``), with no capabilities, in a session of its own, and dies with assay (``--die-with-parent``;
when its PID namespace's first process ends, the kernel kills every process left in it, ``setsid`` or not).
It sees a file system assembled from nothing:

- read-only: the system directories (``/usr``, ``/etc`` without shadow files and SSH keys, ``/opt``, ...), the
  Python interpreter that runs assay, the directories on ``PATH`` and ``readable``;
- a private ``/tmp`` and a private, empty ``$HOME`` (both discarded at exit);
- read-write: only ``writable`` (a candidate's worktree, an agent's copy), with ``read_only`` paths inside
  them re-mounted read-only;
- masked but writable (what is written there is lost): the ``scratch`` paths;
- never: the ``protected`` roots (the project, the repository, the run data) — an empty directory stands where
  one would have been visible — and the ``hidden`` paths (case files, the configuration, check scripts,
  ``.git``, and for a candidate whatever of its work directory is not declared: :class:`WorkdirJail`), masked
  by an empty file or directory wherever a mount would show them;
- ``/proc`` of its own PID namespace only, and a minimal ``/dev``.

A runner runs its cases in long-lived jails (:mod:`assay.sandbox.workers`), one per case in flight, reused
case after case: everything above holds for each case, and after each one every process it started is killed
and the private ``/tmp``, ``/dev/shm`` and ``$HOME`` are emptied; ``/`` and ``/dev`` are read-only there.

What it does not do: filter system calls (no seccomp), limit CPU (the timeout does), disk use in the worktree,
or the memory a private ``/tmp`` holds beyond its size cap.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

from assay.sandbox.survey import masked_entries

BWRAP_ENV = "ASSAY_BWRAP"
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/gnu")
# Readable to root through a user namespace that maps to root: never shown.
SYSTEM_SECRETS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/security/opasswd",
)
BASE_FLAGS = ("--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--cap-drop", "ALL")
_SIZED_TMP = ("--size", "1048576", "--tmpfs", "/tmp")
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
)


@dataclass(frozen=True)
class BwrapStatus:
    """Whether bubblewrap works here: the program, the optional flags it takes, or why it cannot run."""

    program: str | None
    reason: str = ""
    disable_userns: bool = False
    tmpfs_size: bool = False

    @property
    def available(self) -> bool:
        return self.program is not None


def _probe(program: str, extra: Sequence[str]) -> str | None:
    """None when ``bwrap`` runs a trivial jail with ``extra`` flags, else its error (first stderr line)."""
    argv = [
        program,
        *BASE_FLAGS,
        *extra,
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
        "true",
    ]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[0] if lines else f"exit code {done.returncode}"


@functools.cache
def bwrap_status() -> BwrapStatus:
    """Probe bubblewrap once per process. ``ASSAY_BWRAP`` names the program (default ``bwrap`` on ``PATH``);
    set to an empty string, assay behaves as on a machine without it."""
    name = os.environ.get(BWRAP_ENV, "bwrap")
    if not name.strip():
        return BwrapStatus(None, f"bubblewrap turned off ({BWRAP_ENV} is empty)")
    program = shutil.which(name)
    if program is None:
        return BwrapStatus(None, f"bubblewrap ({name}) is not installed; {INSTALL_HINT}")
    # One jail with every optional flag first: where it works (bubblewrap 0.8 or later), one start instead
    # of three decides all (each start is 10-30 ms on the path to the first case).
    if _probe(program, ("--disable-userns", *_SIZED_TMP)) is None:
        return BwrapStatus(program, disable_userns=True, tmpfs_size=True)
    error = _probe(program, ())
    if error is not None:
        return BwrapStatus(
            None, f"bubblewrap cannot create a sandbox here ({error}); user namespaces may be disabled"
        )
    return BwrapStatus(
        program,
        disable_userns=_probe(program, ("--disable-userns",)) is None,
        tmpfs_size=_probe(program, _SIZED_TMP) is None,
    )


@dataclass(frozen=True)
class Jail:
    """What a jailed process may see and write (absolute paths; see the module docstring)."""

    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    protected: tuple[Path, ...] = ()
    network: bool = False
    tmp_mb: int = 1024
    scratch: tuple[Path, ...] = ()
    scratch_dir: Path | None = None

    def __hash__(self) -> int:
        # A jail keys the pool of its workers, looked up several times per case: hash its paths once.
        known: int | None = self.__dict__.get("_hash")
        if known is None:
            known = hash(tuple(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, "_hash", known)
        return known

    def __getstate__(self) -> dict[str, object]:
        # Another process hashes strings (paths) with another seed.
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def with_paths(
        self,
        *,
        writable: Iterable[Path] = (),
        readable: Iterable[Path] = (),
        read_only: Iterable[Path] = (),
        hidden: Iterable[Path] = (),
    ) -> Jail:
        """This jail with more paths."""
        return Jail(
            writable=(*self.writable, *writable),
            readable=(*self.readable, *readable),
            read_only=(*self.read_only, *read_only),
            hidden=(*self.hidden, *hidden),
            scratch=self.scratch,
            scratch_dir=self.scratch_dir,
            protected=self.protected,
            network=self.network,
            tmp_mb=self.tmp_mb,
        )


def interpreter_paths() -> list[Path]:
    """The directories of the Python that runs assay (a venv and the installation it was made from), and
    the one assay is imported from: outside the venv in an editable install, and the code that ``assay
    init`` writes for a promptfoo suite imports ``assay.cases.promptfoo_bridge`` in the jail."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    found.add(str(Path(sys.executable).resolve().parent.parent))
    found.add(str(Path(__file__).resolve().parents[2]))
    return [Path(p) for p in sorted(found) if p]


def path_dirs(env: Mapping[str, str]) -> list[Path]:
    """The absolute directories on ``env["PATH"]`` (never ``/`` itself). A version manager's ``shims``
    directory (pyenv, rbenv, ...) brings its root: a shim runs the manager's own ``libexec`` script, which
    runs the chosen version from under that root."""
    dirs = []
    for entry in env.get("PATH", "").split(os.pathsep):
        if entry.startswith("/") and entry.rstrip("/"):
            path = Path(entry)
            dirs.append(path)
            if path.name == "shims" and (path.parent / "libexec").is_dir():
                dirs.append(path.parent)
    return dirs


def _under(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or below it (both absolute and normalised)."""
    p, r = str(path), str(root)
    return p == r or p.startswith(r if r.endswith("/") else r + "/")


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


class _Plan:
    """Mount operations in order, and which of them decides what is at a path."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self.mounts: list[tuple[Path, bool]] = []  # (destination, shows the host's content)

    def add(self, dest: Path, args: Sequence[str], shows_host: bool) -> None:
        self.args.extend(args)
        self.mounts.append((dest, shows_host))

    def shows(self, path: Path) -> bool:
        """Whether ``path`` would show host content: the last mount at or above it is a bind."""
        shown = False
        for dest, host in self.mounts:
            if _under(path, dest):
                shown = host
        return shown

    def covered(self, path: Path) -> bool:
        return any(_under(path, dest) for dest, _ in self.mounts)


@functools.cache
def _system() -> tuple[tuple[Path, tuple[str, ...], bool], ...]:
    """The system directories as mount operations: (path, bwrap arguments, shows host content)."""
    ops = []
    for name in SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            ops.append((path, ("--symlink", os.readlink(path), name), False))
        elif path.is_dir():
            ops.append((path, ("--ro-bind", name, name), True))
    return tuple(ops)


@functools.cache
def _system_secrets() -> tuple[Path, ...]:
    return tuple(Path(p) for p in SYSTEM_SECRETS if os.path.lexists(p))


_READABLE: dict[Path, Path] = {}


def _real_readable(path: Path) -> Path | None:
    """The real path of a readable path (the interpreter, a PATH directory), or None when it does not exist;
    found paths are remembered (they do not move while assay runs; a stat per mount per case adds up)."""
    known = _READABLE.get(path)
    if known is None and path.exists():
        known = _READABLE[path] = _real(path)
    return known


def _by_depth(paths: Iterable[Path]) -> list[Path]:
    return sorted(dict.fromkeys(paths), key=lambda p: (len(p.parts), str(p)))


def jail_argv(jail: Jail, *, home: str | None, status: BwrapStatus | None = None) -> list[str]:
    """The ``bwrap`` command line (up to and including ``--``) that runs a command in ``jail``. ``home`` is
    the ``$HOME`` the process will get: a private tmpfs is mounted there."""
    status = status or bwrap_status()
    if status.program is None:
        raise RuntimeError(status.reason)
    args = [status.program, *BASE_FLAGS]
    if jail.network:
        args.append("--share-net")
    if status.disable_userns:
        args.append("--disable-userns")
    size = ["--size", str(jail.tmp_mb * 2**20)] if status.tmpfs_size else []
    plan = _Plan()
    for path, op, host in _system():
        plan.add(path, op, shows_host=host)
    if jail.network:
        resolv = Path("/etc/resolv.conf")
        target = _real(resolv)
        if resolv.is_symlink() and target.exists() and not plan.covered(target):
            plan.add(target, ["--ro-bind", str(target), str(target)], shows_host=True)
    plan.add(Path("/dev"), ["--dev", "/dev"], shows_host=False)
    plan.add(Path("/proc"), ["--proc", "/proc"], shows_host=False)
    plan.add(Path("/tmp"), [*size, "--tmpfs", "/tmp"], shows_host=False)
    if home and home.startswith("/") and home.rstrip("/"):
        if not plan.covered(Path(home)):
            plan.add(Path(home), [*size, "--tmpfs", home], shows_host=False)
        elif not plan.shows(Path(home)):  # inside a private tmpfs (a HOME under /tmp): it must still exist
            plan.add(Path(home), ["--dir", home], shows_host=False)

    protected = _by_depth(_real(p) for p in jail.protected)
    writable = _by_depth(_real(p) for p in jail.writable if p.exists())
    readable = [r for r in map(_real_readable, jail.readable) if r is not None]
    read_only = [p for p in readable if any(_under(p, w) for w in writable)]
    read_only += [_real(p) for p in jail.read_only if p.exists()]
    readable = [p for p in readable if p not in read_only and not plan.shows(p)]
    inside = [p for p in readable if any(_under(p, root) for root in protected)]

    def bind(paths: Iterable[Path], flag: str) -> None:
        for path in _by_depth(paths):
            if flag == "--ro-bind" and plan.shows(path) and path not in read_only:
                continue  # already visible, read-only
            plan.add(path, [flag, str(path), str(path)], shows_host=True)

    bind([p for p in readable if p not in inside], "--ro-bind")
    masked_roots = [root for root in protected if plan.shows(root)]
    for root in masked_roots:
        plan.add(root, ["--tmpfs", str(root)], shows_host=False)
    bind(inside, "--ro-bind")
    bind(writable, "--bind")
    for path in _by_depth(read_only):
        if plan.shows(path):
            plan.add(path, ["--ro-bind", str(path), str(path)], shows_host=True)
    hidden = [_real(p.parent) / p.name for p in jail.hidden]
    scratch = {_real(p.parent) / p.name for p in jail.scratch} - set(hidden)
    for path in _by_depth([*_system_secrets(), *hidden, *scratch]):
        if not plan.shows(path) or path.is_symlink() or not path.exists():
            continue
        # A scratch mask takes writes (and loses them): a candidate rewriting a file that an earlier one left
        # keeps working, without seeing what was there.
        if path.is_dir():
            ro = [] if path in scratch else ["--remount-ro", str(path)]
            plan.add(path, [*(size if path in scratch else []), "--tmpfs", str(path), *ro], shows_host=False)
            continue
        stand_in = scratch_file(jail.scratch_dir, path) if path in scratch and jail.scratch_dir else None
        if stand_in is not None and stand_in.is_file():
            plan.add(path, ["--bind", str(stand_in), str(path)], shows_host=False)
        else:
            plan.add(path, ["--ro-bind", "/dev/null", str(path)], shows_host=False)
    for root in masked_roots:
        if root not in writable and root not in readable:
            plan.args += ["--remount-ro", str(root)]
    return [*args, *plan.args, "--"]


def scratch_file(scratch_dir: Path, path: Path) -> Path:
    """The empty file in ``scratch_dir`` that stands in for the masked file ``path`` (it takes the writes)."""
    return scratch_dir / hashlib.sha256(str(path).encode()).hexdigest()[:32]


def jail_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment inside a jail: ``env`` with ``TMPDIR`` on the private ``/tmp``."""
    return {**env, "TMPDIR": "/tmp"}


@dataclass(frozen=True)
class WorkdirJail:
    """The jail of a project's candidates, for any work directory that holds the artifact root (the project
    itself, or a run's worktree). Relative paths are relative to the artifact root and may start with ``..``;
    ``read_only`` entries may be glob patterns (``artifact.forbid``).

    ``shown``: deny by default. When set (patterns, as ``artifact.paths``), the work directory shows only what
    they and ``read_only`` match; every other entry that exists when a work directory is first jailed is
    masked, writable (``Jail.scratch``: a candidate may rewrite a file an earlier one left, and what it writes
    there is lost; :mod:`assay.sandbox.survey`). That survey holds until :meth:`forget`, at the end of the work
    directory's evaluation: entries that appear meanwhile are the candidate's own output and stay visible.
    None: everything but ``hidden`` is shown.

    The jail of a work directory is likewise made once, at its first process, and holds until :meth:`forget`
    (the ``read_only`` globs included): a file the candidate creates meanwhile is its own output."""

    hidden: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    readable: tuple[Path, ...] = ()
    protected: tuple[Path, ...] = ()
    fallback_dir: Path | None = None
    network: bool = False
    shown: tuple[str, ...] | None = None
    _surveys: dict[Path, tuple[tuple[Path, ...], Path]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    _jails: dict[tuple[Path, tuple[Path, ...]], Jail] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    def for_workdir(self, workdir: Path, *, readable: Iterable[Path] = ()) -> Jail:
        """The jail of a process running in ``workdir`` (writable), with ``readable`` paths besides."""
        key = (Path(workdir), tuple(readable))
        jail = self._jails.get(key)
        if jail is None:
            jail = self._jails[key] = self._make(Path(os.path.realpath(workdir)), key[1])
        return jail

    def _make(self, root: Path, readable: tuple[Path, ...]) -> Jail:
        hidden = {Path(os.path.normpath(root / rel)) for rel in self.hidden}
        read_only: list[Path] = []
        outside: list[Path] = []
        for entry in self.read_only:
            pattern = entry.strip().rstrip("/")
            if not pattern or Path(pattern).is_absolute():
                continue
            if any(ch in pattern for ch in "*?["):
                read_only.extend(p for p in root.glob(pattern) if Path(os.path.normpath(p)) not in hidden)
                continue
            path = Path(os.path.normpath(root / pattern))
            if not path.exists() and self.fallback_dir is not None:
                path = Path(os.path.normpath(self.fallback_dir / pattern))
            (read_only if _under(path, root) else outside).append(path)
        masked: tuple[Path, ...] = ()
        scratch_dir = None
        if self.shown is not None:
            known = self._surveys.get(root)
            if known is None:
                known = self._surveys[root] = _survey(root, (*self.shown, *self.read_only), hidden)
            masked, scratch_dir = known
        return Jail(
            writable=(root,),
            readable=(*self.readable, *outside, *readable),
            read_only=tuple(p for p in read_only if p not in hidden and p not in masked),
            hidden=tuple(sorted(hidden)),
            protected=self.protected,
            network=self.network,
            scratch=masked,
            scratch_dir=scratch_dir,
        )

    def forget(self, workdir: Path | None = None) -> None:
        """End the jail and the survey of ``workdir`` (None: of every work directory): the next process jailed
        there gets fresh ones, and what candidates wrote over its masked files is deleted."""
        chosen = None if workdir is None else Path(os.path.realpath(workdir))
        for key in [k for k in self._jails if chosen is None or Path(os.path.realpath(k[0])) == chosen]:
            del self._jails[key]
        for root in list(self._surveys) if chosen is None else [chosen]:
            known = self._surveys.pop(root, None)
            if known is not None:
                shutil.rmtree(known[1], ignore_errors=True)


def _survey(root: Path, shown: Sequence[str], hidden: set[Path]) -> tuple[tuple[Path, ...], Path]:
    """What to mask in ``root``, and a new folder of empty stand-ins for the masked files."""
    masked = tuple(masked_entries(root, shown, hidden))
    scratch_dir = Path(tempfile.mkdtemp(prefix="assay-scratch-"))
    for path in masked:
        if not path.is_dir():
            scratch_file(scratch_dir, path).touch()
    return masked, scratch_dir
