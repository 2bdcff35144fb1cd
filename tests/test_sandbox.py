import asyncio
import gc
import os
import subprocess
import time

import pytest

from assay.sandbox import SandboxLimits, _run, _spawn, decode_output, run_process, scrubbed_env


@pytest.fixture(autouse=True, params=["posix_spawn", "asyncio"])
def backend(request, monkeypatch):
    """Every test runs against both back ends: they must behave the same."""
    if request.param == "posix_spawn" and not _spawn.available():
        pytest.skip("posix_spawn + pidfd back end not available here")
    monkeypatch.setattr(_run, "_LEAN", request.param == "posix_spawn")
    return request.param


async def test_captures_stdout_stderr_and_exit_code(tmp_path):
    result = await run_process("echo out; echo err >&2; exit 3", cwd=tmp_path)
    assert result.stdout == b"out\n"
    assert result.stderr == b"err\n"
    assert result.exit_code == 3
    assert result.error is None


async def test_timeout_kills_the_whole_process_group():
    start = time.perf_counter()
    result = await run_process("sleep 30 & sleep 30", limits=SandboxLimits(timeout_s=0.3))
    assert result.timed_out
    assert "timed out" in (result.error or "")
    assert time.perf_counter() - start < 5


async def test_background_child_holding_the_pipe_does_not_block():
    start = time.perf_counter()
    result = await run_process("sleep 30 & echo started", limits=SandboxLimits(timeout_s=10))
    assert result.stdout == b"started\n"
    assert not result.timed_out
    assert time.perf_counter() - start < 5


async def test_flood_is_capped_and_killed_quickly():
    start = time.perf_counter()
    result = await run_process("yes", limits=SandboxLimits(timeout_s=20, max_output_bytes=10_000))
    assert len(result.stdout) == 10_000
    assert result.truncated
    assert "output flood" in (result.error or "")
    assert time.perf_counter() - start < 5


async def test_large_output_under_flood_limit_keeps_the_head():
    command = "python3 -c \"import sys; sys.stdout.write('a' * 1000 + 'b' * 5000)\""
    result = await run_process(command, limits=SandboxLimits(max_output_bytes=1000))
    assert result.stdout == b"a" * 1000
    assert result.truncated
    assert result.error is None


async def test_stderr_keeps_the_tail():
    command = "python3 -c \"import sys; sys.stderr.write('x' * 5000 + 'END')\""
    result = await run_process(command, limits=SandboxLimits(max_output_bytes=100))
    assert result.stderr.endswith(b"END")
    assert len(result.stderr) == 100


async def test_memory_limit_stops_a_hog():
    command = "python3 -c \"x = bytearray(2 * 1024 ** 3); print('allocated')\""
    result = await run_process(command, limits=SandboxLimits(memory_mb=256))
    assert result.exit_code != 0
    assert b"allocated" not in result.stdout
    assert b"MemoryError" in result.stderr


async def test_killed_process_is_reported():
    result = await run_process("kill -9 $$")
    assert result.error == "killed by signal SIGKILL"


async def test_missing_executable_is_an_error_not_an_exception():
    result = await run_process(["/nonexistent/binary"])
    assert result.error is not None and "could not start" in result.error


async def test_stdin_is_delivered():
    result = await run_process(["cat"], stdin=b"payload")
    assert result.stdout == b"payload"


def test_scrubbed_env_is_an_allow_list(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "y")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:pass@db/prod")
    monkeypatch.setenv("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0/B0/x")
    monkeypatch.setenv("LC_TIME", "C")
    env = scrubbed_env()
    assert not {"OPENAI_API_KEY", "MY_SERVICE_TOKEN", "DATABASE_URL", "SLACK_WEBHOOK_URL"} & set(env)
    assert env["LC_TIME"] == "C" and env["PATH"] == os.environ["PATH"]
    assert set(env) <= {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR"} | {
        name for name in env if name.startswith("LC_")
    } | {"PYTHONDONTWRITEBYTECODE"}
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"  # Python leaves no __pycache__ in the tree it runs in
    assert scrubbed_env(extra={"PYTHONDONTWRITEBYTECODE": ""})["PYTHONDONTWRITEBYTECODE"] == ""
    assert scrubbed_env(allow=["MY_SERVICE_TOKEN"])["MY_SERVICE_TOKEN"] == "y"
    assert set(scrubbed_env(allow=["*_URL"])) >= {"DATABASE_URL", "SLACK_WEBHOOK_URL"}
    assert scrubbed_env(extra={"GREETING": "hi"})["GREETING"] == "hi"
    assert os.environ["OPENAI_API_KEY"] == "x"


async def test_child_does_not_see_secrets(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "secret-value")
    result = await run_process("echo ${ANTHROPIC_API_KEY:-unset}")
    assert result.stdout == b"unset\n"


def test_decode_output_flags_binary():
    assert decode_output(b"plain text") == ("plain text", False)
    text, binary = decode_output(b"\x00\xff\xfeabc")
    assert binary and "abc" in text and "\x00" not in text


async def test_unread_large_stdin_still_meets_the_timeout():
    start = time.perf_counter()
    result = await run_process("sleep 20", stdin=b"x" * 2_000_000, limits=SandboxLimits(timeout_s=0.5))
    assert result.timed_out
    assert time.perf_counter() - start < 5


async def test_environment_changes_after_first_use_are_still_scrubbed(monkeypatch):
    env = scrubbed_env()
    first = await run_process("echo ${LATE_API_KEY:-unset}", env=env)
    assert first.stdout == b"unset\n"
    monkeypatch.setenv("LATE_API_KEY", "leak")
    again = await run_process("echo ${LATE_API_KEY:-unset}", env=env)
    assert again.stdout == b"unset\n"


async def test_extra_variables_reach_the_child():
    result = await run_process(
        'echo "$GREETING"', env=scrubbed_env(extra={"GREETING": "it's 'quoted' $HOME"})
    )
    assert result.stdout == b"it's 'quoted' $HOME\n"


async def test_runs_in_the_given_directory(tmp_path):
    (tmp_path / "marker.txt").write_text("here")
    result = await run_process("cat marker.txt", cwd=tmp_path)
    assert result.stdout == b"here"
    argv = await run_process(["cat", "marker.txt"], cwd=tmp_path)
    assert argv.stdout == b"here"


async def test_missing_directory_is_an_error(tmp_path):
    result = await run_process("true", cwd=tmp_path / "nope")
    assert "no such directory" in (result.error or "")


@pytest.mark.parametrize("terminal", [True, False])
async def test_process_leads_its_own_group_and_its_own_session_where_assay_has_a_terminal(
    backend: str, terminal: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without a terminal a session of its own gives nothing a group does not (no terminal to reach in either)
    # and costs a scheduling group per process where the kernel groups tasks by session (autogroup).
    monkeypatch.setattr(_spawn, "without_terminal", lambda: not terminal)
    result = await run_process("ps -o sid= -o pgid= -p $$; echo $$")
    sid, pgid, pid = result.stdout.split()
    assert pgid == pid
    if terminal or backend == "asyncio":  # the portable back end always makes a session
        assert sid == pid
    else:
        assert int(sid) == os.getsid(0)


BUSY = "sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done'"  # a child's work: ~0.1 s of CPU


async def test_cpu_time_counts_the_work_of_the_process_and_its_children_not_its_waiting(backend):
    busy = await run_process(BUSY)
    idle = await run_process("sleep 0.3")
    assert busy.error is None and idle.error is None and idle.duration_s >= 0.3
    if backend == "asyncio":  # the portable back end does not measure it: the gate falls back to wall time
        assert busy.cpu_s is None and idle.cpu_s is None
        return
    assert busy.cpu_s is not None and busy.cpu_s >= 0.05
    assert idle.cpu_s is not None and idle.cpu_s < 0.05


async def test_many_children_at_once_leave_no_descriptor_behind(tmp_path):
    import asyncio

    async def one(i):
        return await run_process(f"echo {i}; echo e{i} >&2", cwd=tmp_path)

    await one(-1)  # what a back end makes once per process or loop
    gc.collect()  # what earlier tests left to the collector (their loops' selectors) closes now, not midway
    before = len(os.listdir("/proc/self/fd"))
    results = await asyncio.gather(*(one(i) for i in range(200)))
    assert [r.stdout for r in results] == [f"{i}\n".encode() for i in range(200)]
    assert [r.stderr for r in results] == [f"e{i}\n".encode() for i in range(200)]
    assert all(r.exit_code == 0 for r in results)
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == before


async def test_a_grandchild_that_left_the_group_and_holds_the_pipes_loses_them_after_the_grace(backend):
    """The shell's exit is seen though its pipes never end (a grandchild in a session of its own holds them):
    the output is given up after the grace, not at the timeout. (The portable back end does not wait for
    pipes after the exit.)"""
    if backend != "posix_spawn":
        pytest.skip("the lean back end's exit watch")
    start = time.perf_counter()
    result = await run_process("setsid sleep 31.7 & echo started", limits=SandboxLimits(timeout_s=20))
    assert not result.timed_out
    assert result.error == "a child process kept the output pipes open after exit; output lost"
    assert result.exit_code == 0
    assert time.perf_counter() - start < 10
    subprocess.run(["pkill", "-f", "^sleep 31.7$"], check=False)  # the grandchild outlived its group


async def test_a_process_that_closes_its_output_and_runs_on_is_waited_for():
    result = await run_process(
        "echo early; exec >&- 2>&-; sleep 0.3; exit 5", limits=SandboxLimits(timeout_s=10)
    )
    assert result.stdout == b"early\n"
    assert result.exit_code == 5
    assert result.error is None and not result.timed_out
    assert result.duration_s >= 0.3


async def test_a_spawn_that_fails_is_an_error_result(backend):
    if backend != "posix_spawn":
        pytest.skip("the C spawn's failure path")
    result = await _spawn.run(["/nonexistent/sh", "-c", "true"], env={}, limits=SandboxLimits(), stdin=None)
    assert result.error is not None and result.error.startswith("could not start process:")
    assert result.exit_code is None


async def test_a_launcher_that_fails_unexpectedly_fails_its_case_and_serves_on(backend, monkeypatch):
    if backend != "posix_spawn":
        pytest.skip("the lean back end's launchers")

    def broken(*args, **kwargs):
        raise ValueError("embedded null byte")

    limits = SandboxLimits(timeout_s=10)
    with monkeypatch.context() as patch:
        patch.setattr(_spawn, "launch", broken)
        failed = await asyncio.gather(*(run_process("true", limits=limits) for _ in range(12)))
    assert all(r.error == "could not start process: embedded null byte" for r in failed)
    assert all(r.duration_s < 5 for r in failed)
    again = await run_process("echo fine", limits=limits)
    assert again.stdout == b"fine\n"
