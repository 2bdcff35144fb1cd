"""The bubblewrap jail itself, through ``run_process``: what a jailed process can see, write and signal, and
that everything it starts dies with it (and with assay, however assay dies)."""

from __future__ import annotations

import os
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
    SandboxLimits,
    bwrap_status,
    interpreter_paths,
    path_dirs,
    run_process,
    scrubbed_env,
)
from assay.sandbox.jail import BwrapStatus, jail_argv
from assay.sandbox.workers import JailWorkers
from tests.sandbox.procs import marked_processes, unique_marker

pytestmark = [pytest.mark.e2e, pytest.mark.bwrap]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with secrets beside a worktree, the way a run lays them out."""
    root = tmp_path / "proj"
    worktree = root / ".assay" / "worktrees" / "run1"
    worktree.mkdir(parents=True)
    (root / "cases.yaml").write_text("expected: ZEBRA-4471\n")
    (root / "assay.yaml").write_text("runner: {}\n")
    (worktree / "prompt.md").write_text("artifact\n")
    (worktree / "cases.yaml").write_text("expected: ZEBRA-4471\n")
    (worktree / "harness.py").write_text("print('harness')\n")
    (worktree / "graders").mkdir()
    (worktree / "graders" / "check.sh").write_text("grep ZEBRA-4471\n")
    return root


def jail_for(project: Path, **kwargs) -> Jail:
    worktree = project / ".assay" / "worktrees" / "run1"
    env = scrubbed_env()
    return Jail(
        writable=(worktree,),
        readable=(*interpreter_paths(), *path_dirs(env)),
        hidden=(worktree / "cases.yaml", worktree / "graders"),
        read_only=(worktree / "harness.py",),
        protected=(project, project / ".assay"),
        **kwargs,
    )


@pytest.fixture(params=["own jail", "jail worker"])
async def workers(request: pytest.FixtureRequest) -> AsyncIterator[JailWorkers | None]:
    """The test runs twice: ``run`` in a jail of its own per command, and in a long-lived jail worker."""
    global WORKERS
    WORKERS = JailWorkers() if request.param == "jail worker" else None
    yield WORKERS
    if WORKERS is not None:
        await WORKERS.close()
    WORKERS = None


WORKERS: JailWorkers | None = None


async def run(project: Path, script: str, **kwargs) -> tuple[str, str]:
    worktree = project / ".assay" / "worktrees" / "run1"
    result = await run_process(
        script, cwd=worktree, jail=jail_for(project, **kwargs), limits=SandboxLimits(30), workers=WORKERS
    )
    assert result.error is None, (result.error, result.stderr)
    return result.stdout.decode(), result.stderr.decode()


@pytest.mark.usefixtures("workers")
async def test_it_sees_its_worktree_without_the_hidden_files(project: Path) -> None:
    out, err = await run(
        project,
        "cat prompt.md; cat cases.yaml; ls graders; cat ../../../cases.yaml; ls ../../..; cat harness.py;"
        f" cat {project}/cases.yaml; timeout 10 find / -name cases.yaml -size +0 2>/dev/null | xargs cat 2>/dev/null",
    )
    assert "artifact" in out and "harness" in out
    assert "ZEBRA" not in out + err and "check.sh" not in out
    assert "No such file" in err  # the project around the worktree is not there


@pytest.mark.usefixtures("workers")
async def test_it_writes_only_its_worktree_and_a_private_tmp(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    out, err = await run(
        project,
        f"echo x > new.txt && echo made; echo x > {outside}; echo x > ../../../planted.txt; echo x >> harness.py;"
        " echo x > /tmp/scratch && cat /tmp/scratch; touch /usr/evil; echo x > ~/.profile && echo home",
    )
    assert out.split() == ["made", "x", "home"]
    assert (project / ".assay" / "worktrees" / "run1" / "new.txt").exists()
    assert not outside.exists() and not (project / "planted.txt").exists()
    assert (project / ".assay" / "worktrees" / "run1" / "harness.py").read_text() == "print('harness')\n"
    assert "Read-only file system" in err
    assert not Path("/tmp/scratch").exists() or Path("/tmp/scratch").read_text() != "x\n"


@pytest.mark.usefixtures("workers")
async def test_it_sees_only_its_own_processes_and_cannot_signal_assay(project: Path) -> None:
    out, _ = await run(
        project,
        f"ls /proc | grep -E '^[0-9]+$' | wc -l; kill -9 {os.getpid()} 2>&1 || echo refused; cat /proc/*/cmdline",
    )
    count, *rest = out.split()
    assert int(count) <= 6  # bwrap's init, the shell, ls, grep, wc
    assert "refused" in rest
    assert "bin/pytest" not in out


@pytest.mark.usefixtures("workers")
async def test_environment_home_and_network(project: Path) -> None:
    os.environ["ASSAY_TEST_TOKEN"] = "should-not-pass"
    try:
        out, _ = await run(project, "env; echo HOME=$HOME; echo; ls -A ~")
    finally:
        del os.environ["ASSAY_TEST_TOKEN"]
    assert "ASSAY_TEST_TOKEN" not in out and "TMPDIR=/tmp" in out
    home = Path(os.environ["HOME"])
    assert f"HOME={home}" in out
    # A private, empty $HOME: only the mount points of readable paths under it (the Python, PATH directories).
    mounts = {p.relative_to(home).parts[0] for p in jail_for(project).readable if home in p.parents}
    assert set(out.split("\n\n", 1)[1].split()) <= mounts
    offline, _ = await run(project, "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '")
    assert offline.split() == ["lo"]
    online, _ = await run(project, "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '", network=True)
    assert len(online.split()) >= 1


@pytest.mark.usefixtures("workers")
async def test_children_die_with_it_setsid_or_not(project: Path) -> None:
    marker = unique_marker()
    script = textwrap.dedent(
        f"""
        import os, time
        for _ in range(5):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execvp("sleep", ["sleep", "{marker}"])
                os._exit(0)
        print("spawned", flush=True)
        """
    )
    out, _ = await run(project, f"python3 -c '{script}'; sleep 0.5")
    assert out.strip() == "spawned"
    time.sleep(0.3)
    assert marked_processes(marker) == []


async def test_setup_failure_is_an_error_not_a_crash(project: Path) -> None:
    status = BwrapStatus(program="/bin/false")
    argv = jail_argv(jail_for(project), home=None, status=status)
    assert argv[0] == "/bin/false" and argv[-1] == "--"
    with pytest.raises(RuntimeError, match="not installed"):
        jail_argv(jail_for(project), home=None, status=BwrapStatus(None, "bwrap is not installed"))


def test_a_jailed_process_dies_with_assay_even_on_sigkill(project: Path, tmp_path: Path) -> None:
    marker = unique_marker()
    worktree = project / ".assay" / "worktrees" / "run1"
    driver = tmp_path / "driver.py"
    driver.write_text(
        textwrap.dedent(
            f"""
            import asyncio, sys
            sys.path.insert(0, {str(Path(__file__).parents[2])!r})
            from tests.sandbox.test_jail import jail_for
            from assay.sandbox import run_process, SandboxLimits
            from pathlib import Path
            print("started", flush=True)
            asyncio.run(run_process("(setsid sleep {marker} &) ; sleep {marker}",
                cwd={str(worktree)!r}, jail=jail_for(Path({str(project)!r})), limits=SandboxLimits(600)))
            """
        )
    )
    process = subprocess.Popen([sys.executable, str(driver)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "started"
    deadline = time.monotonic() + 20
    while len(marked_processes(marker)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(marked_processes(marker)) == 2
    process.send_signal(signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + 5
    while marked_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marked_processes(marker) == []


def test_the_probe_reports_why_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_BWRAP", "no-such-bwrap-program")
    bwrap_status.cache_clear()
    try:
        status = bwrap_status()
        assert (
            not status.available and "not installed" in status.reason and "apt-get install" in status.reason
        )
        monkeypatch.setenv("ASSAY_BWRAP", "false")
        bwrap_status.cache_clear()
        assert "cannot create a sandbox here" in bwrap_status().reason
    finally:
        monkeypatch.undo()
        bwrap_status.cache_clear()
    assert bwrap_status().available


@pytest.mark.parametrize(
    ("refused", "starts", "disable_userns"),
    [("", 1, True), ("--disable-userns", 4, False)],
)
def test_one_probe_decides_every_flag_where_bubblewrap_takes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: str, starts: int, disable_userns: bool
) -> None:
    # A stand-in for bwrap that logs each start and fails when given the flag it does not know.
    log = tmp_path / "starts"
    fake = tmp_path / "fake-bwrap"
    fake.write_text(
        f'#!/bin/sh\necho "$*" >> {log}\n'
        f'case " $* " in *" {refused or "--never"} "*) echo "bwrap: Unknown option" >&2; exit 1;; esac\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("ASSAY_BWRAP", str(fake))
    bwrap_status.cache_clear()
    try:
        status = bwrap_status()
    finally:
        monkeypatch.undo()
        bwrap_status.cache_clear()
    assert status.program == str(fake)
    assert (status.disable_userns, status.tmpfs_size) == (disable_userns, True)
    assert len(log.read_text().splitlines()) == starts


def test_a_version_managers_shims_bring_its_root(tmp_path: Path) -> None:
    # pyenv's shim for python3 runs <root>/libexec/pyenv, which runs <root>/versions/...: without the root
    # in the jail, `python3` on such a PATH fails inside it.
    root = tmp_path / ".pyenv"
    (root / "shims").mkdir(parents=True)
    (root / "libexec").mkdir()
    (tmp_path / "bin" / "shims").mkdir(parents=True)  # a folder named shims, not a version manager's
    env = {"PATH": f"{root / 'shims'}:{tmp_path / 'bin' / 'shims'}:/usr/bin"}
    assert path_dirs(env) == [root / "shims", root, tmp_path / "bin" / "shims", Path("/usr/bin")]


def test_the_jail_shows_the_assay_package() -> None:
    # the code `assay init` writes for a promptfoo suite imports assay in the jail, editable install or not
    import assay

    package = Path(assay.__file__).resolve().parent
    assert any(package.is_relative_to(path) for path in interpreter_paths())
