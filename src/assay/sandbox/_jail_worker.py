"""The program a jail worker runs inside bubblewrap: one case after another, each as a child process, and
after each case nothing left behind (see :mod:`assay.sandbox.workers` for the host side).

Run as ``python -I -S _jail_worker.py DIR...`` (``DIR`` are the private directories to empty after each case), as
PID 1 of the jail (``bwrap --as-pid-1``): no bubblewrap init holds the protocol pipes, where a case could
open them through ``/proc/1/fd``, and the kernel drops the signals a case sends it (SIGKILL and SIGSTOP too).
Requests come on standard input, replies go to standard output, both moved at start to descriptors that no
child inherits; the process makes itself non-dumpable, so a case (same user, no capabilities) can neither
ptrace it nor open its descriptors through ``/proc/1/fd``. After each case it SIGKILLs every other
process in its PID namespace, reaps the orphans it inherited, empties the private directories, and
checks that no case changed what it cannot undo (its own limits, priority, scheduling and CPU affinity,
System V IPC objects): then it replies ``dirty`` and exits, and the host starts a fresh worker. Before each case it checks
that its mount table is the one it started with: replacing a file that a mount masks or shows read-only
(a checkout in the worktree, between candidates) makes the kernel drop that mount, and such a jail would show
what it must hide; it then replies ``stale`` without running the case, and exits.

Wire format, both ways: a 4-byte big-endian length, a JSON header, then the byte blobs the header sizes.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import select
import signal
import struct
import sys
import time

# Imported alone, from this folder, without the assay package: what a worker imports is paid at each start,
# on the way to the first case (only the standard library's lightest modules, no typing, no dataclasses).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from assay.sandbox import _watch
else:
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    _watch = __import__("_watch")  # a sibling file, not a distribution: found by the path above

PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
KILL_WAIT_S = 2.0
LENGTH = struct.Struct(">I")
RLIMITS = [getattr(resource, n) for n in dir(resource) if n.startswith("RLIMIT_")]
SYSV = ("/proc/sysvipc/shm", "/proc/sysvipc/sem", "/proc/sysvipc/msg")


def read_exact(fd: int, size: int) -> bytes | None:
    """``size`` bytes from ``fd``; None at end of file."""
    parts = []
    while size:
        chunk = os.read(fd, size)
        if not chunk:
            return None
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def others() -> list[int]:
    """Every process of this PID namespace but this one (PID 1)."""
    me = os.getpid()
    return [int(n) for n in os.listdir("/proc") if n.isdigit() and int(n) not in (1, me)]


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (a zombie holds nothing)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def alone() -> bool:
    """Whether no other process is left in this PID namespace, without listing ``/proc``: every process in it
    descends from its first one (this worker; an orphan is handed to PID 1 or to a subreaper that itself
    descends from it), so when the worker has no child at all, alive or not yet reaped, there is none."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return False


def kill_namespace() -> bool:
    """SIGKILL every other process (daemons that left the case's session included), until none is alive."""
    if alone():
        return True  # the usual end of a case: its process exited, was reaped, and left nothing running
    deadline = time.monotonic() + KILL_WAIT_S
    while True:
        pids = [p for p in others() if alive(p)]
        if not pids:
            return True
        if time.monotonic() > deadline:
            return False
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.0005)


def end_case(pid: int) -> None:
    """What ends a case once its main process exited or must stop: its group, then the whole namespace, so
    nothing holds its pipes open (as when a per-case jail's init exits)."""
    _watch.kill_group(pid)
    kill_namespace()


def mount_points(table: str) -> set[str]:
    """Where something is mounted in this jail (the worktree or a bind may sit inside ``/tmp``), from its
    mount ``table``."""
    points = set()
    for line in table.splitlines():
        field = line.split()[4]
        points.add(_unescape(field) if "\\" in field else field)
    return points


def _unescape(field: str) -> str:
    """A mount table field with its octal escapes (``\\040`` for a space) turned back into characters."""
    parts = field.split("\\")
    text = parts[0]
    for part in parts[1:]:
        code = part[:3]
        if len(code) == 3 and all(ch in "01234567" for ch in code):
            text += chr(int(code, 8)) + part[3:]
        else:
            text += "\\" + part
    return text


def empty(directory: str, mounts: set[str], keep: set[str]) -> bool:
    """Remove everything in ``directory`` but mount points and the directories that lead to them (``keep``);
    False when something could not be removed."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return False
    clean = True
    for entry in entries:
        if entry.path in mounts:
            continue
        if entry.path in keep:
            clean = empty(entry.path, mounts, keep) and clean
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                _remove_tree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            pass
        clean = clean and not os.path.lexists(entry.path)
    return clean


def _remove_tree(path: str) -> None:
    """Remove a directory a case left (shutil is imported only then: most cases leave none)."""
    import shutil

    try:
        shutil.rmtree(path)
    except OSError:
        _unlock(path)
        shutil.rmtree(path)


def _unlock(path: str) -> None:
    """Make a tree the case locked (directories without permissions) removable by its owner."""
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    for root, dirs, _ in os.walk(path, onerror=lambda _e: None):
        for name in dirs:
            child = os.path.join(root, name)
            if not os.path.islink(child):
                with contextlib.suppress(OSError):
                    os.chmod(child, 0o700)


def own_state() -> tuple[object, ...]:
    """What a case could change about this process from outside (same user), and the next case would
    inherit: limits, priority, scheduling policy, CPUs."""
    return (
        tuple(resource.getrlimit(r) for r in RLIMITS),
        os.getpriority(os.PRIO_PROCESS, 0),
        os.sched_getscheduler(0),
        frozenset(os.sched_getaffinity(0)),
    )


def sysv_objects() -> bool:
    """Whether any System V shared memory, semaphore or message queue exists in this IPC namespace."""
    for path in SYSV:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            head = os.read(fd, 4096)  # a header line, then one line per object: the first lines suffice
        except OSError:
            head = b""
        finally:
            os.close(fd)
        if len(head.splitlines()) > 1:
            return True
    return False


def reap() -> None:
    """Collect the case's orphans: as PID 1 the worker inherits them."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def ancestors(mounts: set[str]) -> set[str]:
    """The directories that lead to the mount points: emptying a private directory keeps them."""
    found = set()
    for point in mounts:
        parent = os.path.dirname(point)
        while parent not in found:
            found.add(parent)
            parent = os.path.dirname(parent)
    return found


def clean(dirs: list[str], mounts: set[str], keep: set[str], state: tuple[object, ...]) -> str | None:
    """Leave nothing of the case behind (``keep``: :func:`ancestors` of ``mounts``); the reason the worker
    must not run another case, or None."""
    if not kill_namespace():
        return "a process of the case could not be killed"
    reap()
    if not all([empty(d, mounts, keep) for d in dirs]):
        return "a private directory could not be emptied"
    if sysv_objects():
        return "the case left System V IPC objects"
    if own_state() != state:
        return "the case changed the worker's limits, priority, scheduling or CPU affinity"
    return None


class MountTable:
    """The jail's mount table as the worker found it, and whether it changed since: the kernel flags every
    change of the namespace's mounts on an open ``mountinfo`` (``POLLPRI``), so a case costs one ``poll``."""

    def __init__(self) -> None:
        self.handle = open("/proc/self/mountinfo", "rb")  # noqa: SIM115 (open for the worker's life)
        self.table = self.handle.read().decode()
        self.poller = select.poll()
        self.poller.register(self.handle.fileno(), select.POLLPRI)

    def changed(self) -> bool:
        if not self.poller.poll(0):
            return False
        self.handle.seek(0)
        return self.handle.read().decode() != self.table


def _reply(header: dict[str, object]) -> bytes:
    data = json.dumps(header).encode()
    return LENGTH.pack(len(data)) + data


def serve(requests: int, replies: int, dirs: list[str]) -> None:
    state = own_state()
    table = MountTable()
    mounts = mount_points(table.table)
    keep = ancestors(mounts)
    while True:
        head = read_exact(requests, LENGTH.size)
        if head is None:
            return
        header = json.loads(read_exact(requests, LENGTH.unpack(head)[0]) or b"null")
        stdin = read_exact(requests, header["stdin_len"]) if header["stdin_len"] >= 0 else None
        if table.changed():
            # A file the jail masks or shows read-only was replaced outside it (a checkout): the kernel
            # dropped that mount here. Only a fresh jail shows the tree as the configuration says.
            write_all(replies, _reply({"stale": True, "stdout_len": 0, "stderr_len": 0}))
            return
        timeout_s = header["timeout_s"]
        spawn = _watch.Spawn(
            header["argv"],
            header["env"],
            timeout_s=timeout_s,
            max_output_bytes=header["max_output_bytes"],
            stdin=stdin,
            session=False,  # the worker's session, which bubblewrap made, has no terminal
        )
        ended = _watch.watch(spawn, kill=end_case)
        dirty = clean(dirs, mounts, keep, state)
        if isinstance(ended, str):
            fields: dict[str, object] = {"error": ended}
            stdout = stderr = b""
        else:
            stdout, stderr = bytes(ended.stdout.kept), bytes(ended.stderr.kept)
            if ended.lost_pipes:
                stdout = stderr = b""
            fields = {
                "exit_code": ended.exit_code,
                "timed_out": ended.timed_out,
                "truncated": ended.stdout.truncated or ended.stderr.truncated,
                "duration_s": ended.duration_s,
                "cpu_s": ended.cpu_s,
                "error": _watch.ending_error(
                    stdout=ended.stdout,
                    stderr=ended.stderr,
                    exit_code=ended.exit_code,
                    timed_out=ended.timed_out,
                    lost_pipes=ended.lost_pipes,
                    timeout_s=timeout_s,
                ),
            }
        reply = _reply({**fields, "stdout_len": len(stdout), "stderr_len": len(stderr), "dirty": dirty})
        write_all(replies, reply + stdout + stderr)
        if dirty is not None:
            return


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 or libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0:
        sys.exit("the worker could not make itself non-dumpable")
    # No POSIX message queues: they would outlive a case, and nothing can list them to remove them.
    resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))
    # As PID 1, signals from the case reach the worker only where it handles them: it handles none.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    requests, replies = os.dup(0), os.dup(1)  # dup() makes non-inheritable descriptors
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    serve(requests, replies, sys.argv[1:])


if __name__ == "__main__":
    main()
