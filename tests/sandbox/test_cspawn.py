"""posix_spawn through the C library: the same child as os.posix_spawn's, the interpreter lock released while it
gets to its exec, and no child left behind by a caller cancelled while its case starts."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.sandbox import _cspawn, _spawn

pytestmark = pytest.mark.skipif(not _cspawn.available(), reason="needs glibc 2.26 or later")


def spawn_and_read(command: str, *, setsid: bool) -> list[int]:
    """The numbers ``command`` prints, run through the C library's posix_spawn."""
    read, write = os.pipe2(os.O_CLOEXEC)
    actions = [(os.POSIX_SPAWN_DUP2, write, 1), (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)]
    pid = _cspawn.posix_spawn(
        "/bin/sh", ["/bin/sh", "-c", command], {"PATH": os.defpath}, file_actions=actions, setsid=setsid
    )
    os.close(write)
    with os.fdopen(read, "rb") as handle:
        printed = handle.read().split()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return [pid, *(int(word) for word in printed)]


def test_the_child_leads_a_session_or_a_group_as_asked() -> None:
    pid, sid, pgid = spawn_and_read("ps -o sid= -o pgid= -p $$", setsid=True)
    assert sid == pgid == pid
    pid, sid, pgid = spawn_and_read("ps -o sid= -o pgid= -p $$", setsid=False)
    assert pgid == pid and sid == os.getsid(0)


def test_a_missing_program_is_the_same_error_as_os_posix_spawns() -> None:
    with pytest.raises(OSError) as info:
        _cspawn.posix_spawn("/no/such/program", ["x"], {}, file_actions=[], setsid=True)
    assert info.value.errno == errno.ENOENT


LOCK_RELEASED = """
import os, sys, threading
from assay.sandbox import _cspawn
assert _cspawn.available()
fifo = sys.argv[1]
spawned = []
action = (os.POSIX_SPAWN_OPEN, 0, fifo, os.O_RDONLY, 0)
thread = threading.Thread(target=lambda: spawned.append(
    _cspawn.posix_spawn("/bin/true", ["/bin/true"], {}, file_actions=[action], setsid=True)), daemon=True)
thread.start()
writer = os.open(fifo, os.O_WRONLY)  # blocks until the child opened its end: this thread ran meanwhile
thread.join()
os.close(writer)
_, status = os.waitpid(spawned[0], 0)
print("spawned", os.waitstatus_to_exitcode(status))
"""


def test_other_threads_run_while_the_child_gets_to_its_exec(tmp_path: Path) -> None:
    # The child opens a FIFO before its exec and blocks there until someone opens the other end, and
    # posix_spawn returns only after the exec. The main thread opens that end while another spawns: were the
    # lock held by the spawning thread, the main thread could not, and the interpreter would hang (run apart,
    # with a time bound, so that this test fails instead of hanging).
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-c", LOCK_RELEASED, str(fifo)], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.split() == ["spawned", "0"], done.stderr


async def test_an_eval_cancelled_while_its_cases_spawn_leaves_no_child_running(tmp_path: Path) -> None:
    """Cancelled at every point of a case's start, ``run`` leaves no ``sleep`` behind."""
    import asyncio

    from assay.sandbox._common import SandboxLimits

    marker = f"{tmp_path}/m"
    limits = SandboxLimits(timeout_s=60)
    for delay in (0.0, 0.0005, 0.001, 0.002, 0.005, 0.02):
        task = asyncio.ensure_future(
            _spawn.run(["/bin/sh", "-c", "/bin/sleep 30", marker], env={}, limits=limits, stdin=None)
        )
        await asyncio.sleep(delay)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    await asyncio.sleep(0.2)
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert left == []
