"""Jail workers: cases reuse a long-lived jail, find nothing of the case before, and cannot harm or speak for
the worker; a dead, stopped or tampered-with worker fails its case and is replaced; none outlives its use."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from assay.sandbox import (
    Jail,
    ProcessResult,
    SandboxLimits,
    interpreter_paths,
    path_dirs,
    run_process,
    scrubbed_env,
)
from assay.sandbox.jail import BwrapStatus, WorkdirJail
from assay.sandbox.workers import KEPT_JAILS, JailWorkers
from tests.sandbox.procs import marked_processes, unique_marker

pytestmark = [pytest.mark.e2e, pytest.mark.bwrap]

# The jail's PID namespace: the same for every case of one jail.
JAIL_ID = "echo jail=$(readlink /proc/self/ns/pid)"


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    path = tmp_path / "worktree"
    path.mkdir()
    return path


@pytest.fixture
async def workers() -> AsyncIterator[JailWorkers]:
    pool = JailWorkers(answer_grace_s=2)
    yield pool
    await pool.close()


def jail_of(worktree: Path) -> Jail:
    return Jail(writable=(worktree,), readable=(*interpreter_paths(), *path_dirs(scrubbed_env())))


async def run(
    workers: JailWorkers, worktree: Path, command: str, stdin: bytes | None = None, **limits: float
) -> ProcessResult:
    return await run_process(
        command,
        cwd=worktree,
        jail=jail_of(worktree),
        limits=SandboxLimits(**{"timeout_s": 30, **limits}),  # type: ignore[arg-type]
        stdin=stdin,
        workers=workers,
    )


def jail_id(result: ProcessResult) -> str:
    assert result.error is None, (result.error, result.stderr)
    return next(line for line in result.stdout.decode().splitlines() if line.startswith("jail="))


def worker_processes(worktree: Path) -> list[int]:
    """The host's bwrap processes of jails that bind ``worktree``: one per jail (its init, bwrap as well, is
    its child)."""
    found = marked_processes(str(worktree), comm="bwrap")
    parents = {}
    for pid in found:
        with contextlib.suppress(OSError):
            parents[pid] = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return [pid for pid in found if parents.get(pid) not in found]


def wait_until(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(condition())


async def test_cases_reuse_one_jail_and_close_stops_it(workers: JailWorkers, worktree: Path) -> None:
    first = await run(workers, worktree, JAIL_ID)
    second = await run(workers, worktree, JAIL_ID)
    assert jail_id(first) == jail_id(second)
    assert len(worker_processes(worktree)) == 1
    await workers.close(worktree / ".." / worktree.name)  # any spelling of the work directory
    assert wait_until(lambda: worker_processes(worktree) == [])


async def test_a_case_finds_nothing_of_the_one_before(workers: JailWorkers, worktree: Path) -> None:
    marker = unique_marker()
    (worktree / "data").mkdir()
    (worktree / "data" / "kept.txt").write_text("kept\n")
    first = await run(
        workers,
        worktree,
        f"{JAIL_ID}; (setsid sleep {marker} &); echo x > /tmp/left; echo x > ~/left; echo x > /dev/shm/left;"
        f" mkdir -p /tmp/locked/inner && chmod 000 /tmp/locked; ln -s {worktree}/data /tmp/link;"
        " echo x > /left 2>/dev/null; echo x > /dev/left 2>/dev/null; echo written",
    )
    assert "written" in first.stdout.decode()
    assert marked_processes(marker) == []  # gone when the case ended, not only when the jail does
    second = await run(
        workers,
        worktree,
        f"{JAIL_ID}; ls -A /tmp /dev/shm ~ / /dev | grep -E 'left|locked|link'; ps -eo comm=",
    )
    assert jail_id(first) == jail_id(second)
    listing = second.stdout.decode().split("\n", 1)[1].split()
    worker = Path(sys.executable).name[:15]  # the worker runs as this interpreter (python, python3, ...)
    assert listing == [worker, "sh", "ps"]  # nothing left; only the jail, the worker and this case
    assert (worktree / "data" / "kept.txt").read_text() == "kept\n"  # the link was removed, not followed


async def test_a_case_cannot_signal_its_worker(workers: JailWorkers, worktree: Path) -> None:
    before = jail_id(await run(workers, worktree, JAIL_ID))
    signalled = await run(
        workers, worktree, "for s in INT TERM HUP USR1 STOP KILL; do kill -$s $PPID; done; echo alive"
    )
    assert signalled.stdout == b"alive\n" and signalled.error is None
    assert jail_id(await run(workers, worktree, JAIL_ID)) == before


def the_worker(worktree: Path) -> int:
    """The host pid of the one worker (the child of the outer bwrap) of jails binding ``worktree``."""
    (outer,) = worker_processes(worktree)
    return int(Path(f"/proc/{outer}/task/{outer}/children").read_text().split()[0])


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGSTOP])
async def test_a_worker_that_dies_or_hangs_mid_case_fails_it_and_is_replaced(
    workers: JailWorkers, worktree: Path, how: signal.Signals
) -> None:
    marker = unique_marker()
    before = jail_id(await run(workers, worktree, JAIL_ID))
    task = asyncio.ensure_future(run(workers, worktree, f"echo partial; sleep {marker}", timeout_s=1))
    assert await asyncio.to_thread(wait_until, lambda: len(marked_processes(marker)) == 1)
    os.kill(the_worker(worktree), how)
    start = time.monotonic()
    failed = await task
    assert failed.error is not None and failed.exit_code is None and failed.stdout == b""
    if how == signal.SIGKILL:
        assert failed.error.startswith("the jail's worker died during the case (killed by SIGKILL)")
    else:
        assert failed.timed_out and "did not answer" in failed.error
        assert time.monotonic() - start < 10
    assert jail_id(await run(workers, worktree, JAIL_ID)) != before
    assert await asyncio.to_thread(wait_until, lambda: len(worker_processes(worktree)) == 1)
    assert marked_processes(marker) == []


FORGER = r"""
import json, os, struct
fake = json.dumps({"exit_code": 0, "timed_out": False, "truncated": False, "duration_s": 0, "error": None,
                   "stdout_len": 6, "stderr_len": 0, "dirty": None}).encode()
message = struct.pack(">I", len(fake)) + fake + b"FORGED"
worker = next(p for p in os.listdir("/proc") if p.isdigit()
              and b"_jail_worker" in open(f"/proc/{p}/cmdline", "rb").read())
reached = []
for pid in [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd in fds:
        try:
            handle = os.open(f"/proc/{pid}/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            os.write(handle, message)
            reached.append(f"{pid}/{fd}")
        except OSError:
            pass
        os.close(handle)
for fd in range(3, 256):
    try:
        os.write(fd, message)
        reached.append(f"own/{fd}")
    except OSError:
        pass
for name in ("mem", "environ"):
    try:
        open(f"/proc/{worker}/{name}", "rb").read(1)
        reached.append(f"{worker}/{name}")
    except OSError:
        pass
open("report.txt", "w").write(" ".join(["worker", worker, "reached", *reached]))
"""


async def test_a_case_cannot_write_to_or_read_its_worker(workers: JailWorkers, worktree: Path) -> None:
    (worktree / "forger.py").write_text(FORGER)
    attack = await run(workers, worktree, "python3 forger.py")
    assert attack.error is None and attack.exit_code == 0, attack.stderr
    words = (worktree / "report.txt").read_text().split()
    assert words[0] == "worker" and words[2] == "reached"
    worker = words[1]
    assert [w for w in words[3:] if w.startswith(("own/", f"{worker}/"))] == []
    honest = await run(workers, worktree, "echo next")
    assert honest.stdout == b"next\n" and honest.error is None


async def test_a_case_that_changes_its_worker_gets_it_replaced(workers: JailWorkers, worktree: Path) -> None:
    before = jail_id(await run(workers, worktree, JAIL_ID))
    for change in ("prlimit --pid $PPID --nofile=64:64", "renice -n 5 -p $PPID", "chrt -i -p 0 $PPID"):
        changed = await run(workers, worktree, f"{change} >/dev/null && echo changed")
        assert changed.stdout == b"changed\n", changed.stderr  # allowed: the same user
        after = jail_id(await run(workers, worktree, JAIL_ID))
        assert after != before  # but the next case gets a fresh jail
        before = after
    left = await run(workers, worktree, f"{JAIL_ID}; ipcmk -M 4096 >/dev/null && echo made")
    assert "made" in left.stdout.decode()
    after = await run(workers, worktree, f"{JAIL_ID}; ipcs -m | grep -c '^0x' || true")
    assert jail_id(after) != jail_id(left)
    assert after.stdout.decode().split()[-1] == "0"


async def test_limits_hold_in_a_worker(workers: JailWorkers, worktree: Path) -> None:
    marker = unique_marker()
    before = jail_id(await run(workers, worktree, JAIL_ID))
    slow = await run(workers, worktree, f"sleep {marker}", timeout_s=0.5)
    assert slow.timed_out and slow.error == "timed out after 0.5s"
    assert marked_processes(marker) == []
    flood = await run(workers, worktree, "yes", max_output_bytes=1000)
    assert flood.error is not None and flood.error.startswith("output flood")
    assert len(flood.stdout) == 1000
    hog = await run(workers, worktree, "python3 -c 'x = bytearray(2 * 1024**3)'", memory_mb=256)
    assert hog.exit_code != 0 and b"MemoryError" in hog.stderr
    assert (await run(workers, worktree, "cat", stdin=b"hello")).stdout == b"hello"
    # More than a pipe holds, each way: the request and the reply are written as the pipes drain.
    big = os.urandom(500_000)
    echoed = await run(workers, worktree, "cat", stdin=big)
    assert echoed.error is None and echoed.stdout == big
    # No POSIX message queue can be made: nothing could list it to remove it after the case.
    queues = await run(
        workers, worktree, "python3 -c 'import resource; print(resource.getrlimit(resource.RLIMIT_MSGQUEUE))'"
    )
    assert queues.stdout == b"(0, 0)\n"
    assert jail_id(await run(workers, worktree, JAIL_ID)) == before


async def test_cases_in_flight_get_a_worker_each(workers: JailWorkers, worktree: Path) -> None:
    results = await asyncio.gather(*(run(workers, worktree, f"{JAIL_ID}; sleep 0.3") for _ in range(3)))
    assert len({jail_id(r) for r in results}) == 3
    assert len(worker_processes(worktree)) == 3
    await workers.close()
    assert wait_until(lambda: worker_processes(worktree) == [])


async def test_cancelling_a_case_kills_its_worker(workers: JailWorkers, worktree: Path) -> None:
    marker = unique_marker()
    task = asyncio.ensure_future(run(workers, worktree, f"(setsid sleep {marker} &); sleep {marker}"))
    assert await asyncio.to_thread(wait_until, lambda: len(marked_processes(marker)) == 2, 20)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(
        wait_until, lambda: marked_processes(marker) == [] == worker_processes(worktree)
    )


def test_workers_die_with_assay_even_on_sigkill(worktree: Path, tmp_path: Path) -> None:
    marker = unique_marker()
    driver = tmp_path / "driver.py"
    driver.write_text(
        textwrap.dedent(
            f"""
            import asyncio, sys
            sys.path.insert(0, {str(Path(__file__).parents[2])!r})
            from pathlib import Path
            from tests.sandbox.test_workers import jail_of
            from assay.sandbox import run_process, SandboxLimits
            from assay.sandbox.workers import JailWorkers
            async def main():
                workers = JailWorkers()
                await run_process("true", cwd={str(worktree)!r}, jail=jail_of(Path({str(worktree)!r})),
                                  workers=workers)
                print("started", flush=True)
                await run_process("(setsid sleep {marker} &) ; sleep {marker}", cwd={str(worktree)!r},
                                  jail=jail_of(Path({str(worktree)!r})), limits=SandboxLimits(600), workers=workers)
            asyncio.run(main())
            """
        )
    )
    process = subprocess.Popen([sys.executable, str(driver)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "started"
    assert wait_until(lambda: len(marked_processes(marker)) == 2, 20)
    assert len(worker_processes(worktree)) == 1
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert wait_until(lambda: marked_processes(marker) == [] == worker_processes(worktree))


def fake_bwrap(tmp_path: Path, script: str) -> BwrapStatus:
    """A stand-in for bwrap that runs ``script`` (sh) whatever its arguments."""
    path = tmp_path / "bwrap"
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)
    return BwrapStatus(str(path))


async def run_true(workers: JailWorkers, tmp_path: Path, status: BwrapStatus) -> ProcessResult:
    return await workers.run(
        ["/bin/true"],
        env={},
        limits=SandboxLimits(5),
        stdin=None,
        jail=jail_of(tmp_path),
        home=None,
        status=status,
    )


async def test_a_worker_that_cannot_start_is_an_error(workers: JailWorkers, tmp_path: Path) -> None:
    # What bwrap does when it cannot build the jail: a "bwrap: ..." line and exit code 1.
    failing = fake_bwrap(
        tmp_path, "echo 'bwrap: Creating new namespace failed: No space left on device' >&2\nexit 1"
    )
    assert (
        (await run_true(workers, tmp_path, failing)).error
        == "the sandbox could not be set up: bwrap: Creating new namespace failed: No space left on device"
    )
    crashing = await run_true(workers, tmp_path, BwrapStatus("/bin/false"))
    assert crashing.error == "the jail's worker died during the case (exit code 1)"


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (r"\000\000\000\003abc", "the jail's worker sent a malformed reply"),
        (r"\000\000\000\002{}", "the jail's worker sent a malformed reply"),
        (
            r'\000\000\000\037{"stdout_len":0,"stderr_len":0}xx',
            "the jail's worker sent more than one reply",
        ),
    ],
)
async def test_a_worker_that_breaks_the_protocol_fails_its_case(
    workers: JailWorkers, tmp_path: Path, reply: str, error: str
) -> None:
    # A worker is trusted with nothing: what it sends is parsed, and a reply that is not one fails the case.
    result = await run_true(workers, tmp_path, fake_bwrap(tmp_path, f"printf '{reply}'\nexec sleep 30"))
    assert result.error == error and result.exit_code is None


async def test_a_masked_file_replaced_outside_gets_a_fresh_jail(workers: JailWorkers, worktree: Path) -> None:
    # A checkout between two candidates replaces files: the kernel drops a mount on a replaced file, so a
    # jail made before it would show a hidden file, or let a read-only one be written.
    (worktree / "answers.txt").write_text("old\n")
    (worktree / "harness.py").write_text("old\n")
    env = scrubbed_env()
    jail = Jail(
        writable=(worktree,),
        readable=(*interpreter_paths(), *path_dirs(env)),
        hidden=(worktree / "answers.txt",),
        read_only=(worktree / "harness.py",),
    )
    script = f"{JAIL_ID}; cat answers.txt; echo changed >> harness.py 2>/dev/null; cat harness.py"
    first = await run_process(script, cwd=worktree, jail=jail, workers=workers)
    assert first.stdout.decode().split()[1:] == ["old"]
    for name in ("answers.txt", "harness.py"):
        (worktree / "new").write_text("SECRET\n")
        os.replace(worktree / "new", worktree / name)
    second = await run_process(script, cwd=worktree, jail=jail, workers=workers)
    assert jail_id(second) != jail_id(first)
    assert second.stdout.decode().split()[1:] == ["SECRET"]  # the harness, read-only; the answers hidden
    assert (worktree / "harness.py").read_text() == "SECRET\n"


async def test_only_the_latest_jails_keep_workers(workers: JailWorkers, tmp_path: Path) -> None:
    trees = [tmp_path / f"tree{i}" for i in range(KEPT_JAILS + 2)]
    for tree in trees:
        tree.mkdir()
        assert (await run(workers, tree, "true")).error is None
    assert await asyncio.to_thread(
        wait_until, lambda: [len(worker_processes(t)) for t in trees] == [0, 0] + [1] * KEPT_JAILS
    )


READ_ANSWERS = f"{JAIL_ID}; cat answers.txt 2>/dev/null; true"


def hiding(worktree: Path, name: str) -> Jail:
    """A jail of ``worktree`` with its file ``name`` masked."""
    return Jail(
        writable=(worktree,),
        readable=(*interpreter_paths(), *path_dirs(scrubbed_env())),
        hidden=(worktree / name,),
    )


async def test_a_hidden_file_that_appears_later_is_masked(workers: JailWorkers, worktree: Path) -> None:
    jail = hiding(worktree, "answers.txt")
    first = await run_process(READ_ANSWERS, cwd=worktree, jail=jail, workers=workers)
    (worktree / "answers.txt").write_text("SECRET\n")
    second = await run_process(READ_ANSWERS, cwd=worktree, jail=jail, workers=workers)
    assert "SECRET" not in second.stdout.decode()
    assert jail_id(second) != jail_id(first)


async def test_a_hidden_file_removed_and_made_again_outside_is_masked(
    workers: JailWorkers, worktree: Path
) -> None:
    # Whether a path of the jail changed is looked at case by case only where it has no mount; removing a
    # masked file drops its mount, and the jail made then (without it) must not show it when it comes back.
    (worktree / "answers.txt").write_text("old\n")
    jail = hiding(worktree, "answers.txt")
    first = await run_process(READ_ANSWERS, cwd=worktree, jail=jail, workers=workers)
    assert first.stdout.decode().split()[1:] == []
    (worktree / "answers.txt").unlink()
    second = await run_process(READ_ANSWERS, cwd=worktree, jail=jail, workers=workers)
    assert jail_id(second) != jail_id(first)
    (worktree / "answers.txt").write_text("SECRET\n")
    third = await run_process(READ_ANSWERS, cwd=worktree, jail=jail, workers=workers)
    assert "SECRET" not in third.stdout.decode()
    assert jail_id(third) != jail_id(second)


async def test_a_hidden_link_replaced_by_a_file_outside_is_masked(
    workers: JailWorkers, worktree: Path
) -> None:
    # A symbolic link is not mounted over: only looking says it became a file.
    (worktree / "answers.txt").symlink_to("nowhere")
    jail = hiding(worktree, "answers.txt")
    first = await run_process(READ_ANSWERS, cwd=worktree, jail=jail, workers=workers)
    (worktree / "new").write_text("SECRET\n")
    os.replace(worktree / "new", worktree / "answers.txt")
    second = await run_process(READ_ANSWERS, cwd=worktree, jail=jail, workers=workers)
    assert "SECRET" not in second.stdout.decode()
    assert jail_id(second) != jail_id(first)


async def test_a_case_leads_a_process_group_in_its_workers_session(
    workers: JailWorkers, worktree: Path
) -> None:
    # Not a session of its own (making one costs each case a scheduling group where the kernel groups tasks by
    # session): the worker's, which bubblewrap made and which has no terminal.
    script = "python3 -c 'import os; print(os.getsid(0), os.getpgid(0) == os.getpid())'"
    result = await run(workers, worktree, f"exec {script}")
    assert result.error is None, result.stderr
    assert result.stdout.decode().split() == ["1", "True"]
    tty = await run(workers, worktree, "echo hi > /dev/tty")
    assert tty.exit_code != 0 and b"/dev/tty" in tty.stderr


async def test_a_masked_directory_replaced_outside_stays_masked(workers: JailWorkers, worktree: Path) -> None:
    """Deny by default: a directory the survey masked, removed and made again outside (a checkout), is masked
    in the jail the next case gets, though its worker's mount on it is gone."""
    (worktree / "candidate.py").write_text("")
    (worktree / "key").mkdir()
    (worktree / "key" / "answers.txt").write_text("old\n")
    plan = WorkdirJail(readable=(*interpreter_paths(), *path_dirs(scrubbed_env())), shown=("candidate.py",))
    script = f"{JAIL_ID}; cat key/answers.txt 2>/dev/null; ls; true"
    first = await run_process(script, cwd=worktree, jail=plan.for_workdir(worktree), workers=workers)
    assert first.stdout.decode().split()[1:] == ["candidate.py", "key"]
    shutil.rmtree(worktree / "key")
    (worktree / "key").mkdir()
    (worktree / "key" / "answers.txt").write_text("SECRET\n")
    second = await run_process(script, cwd=worktree, jail=plan.for_workdir(worktree), workers=workers)
    assert "SECRET" not in second.stdout.decode()
    assert jail_id(second) != jail_id(first)


async def test_a_case_reports_its_cpu_time_from_inside_the_jail(workers: JailWorkers, worktree: Path) -> None:
    busy = await run(workers, worktree, "sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done'")
    idle = await run(workers, worktree, "sleep 0.3")
    assert busy.cpu_s is not None and busy.cpu_s >= 0.05
    assert idle.cpu_s is not None and idle.cpu_s < 0.05 <= idle.duration_s
