"""Every exit status means what it says: one test per row of the table in docs/evolve.md ("Exit statuses"),
through the command as a user runs it.

| status | meaning |
| 0 | completed: `evolve` kept a gain or found none (stated on its last line), `adopt` adopted, `eval` all pass |
| 1 | `eval`: some cases fail |
| 2 | a usage or configuration error, a refused adoption included |
| 3 | could not run: a dead end (`evolve`, `eval`), `init` when every case failed before the artifact ran |
| 130 | interrupted (Ctrl-C) |
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay.cli.exits import CONFIG, COULD_NOT_RUN, FAILING, INTERRUPTED, OK, run_status
from assay.loop.engine import RunOutcome
from assay.loop.flags import Flag
from tests.cli.test_runs import stored_run
from tests.loop.test_summary import record

from .conftest import EXAMPLE, assay

pytestmark = pytest.mark.usefixtures("no_bwrap")

ECHO = "import sys\nprint(sys.argv[1])\n"


def echo_project(root: Path, *, expected: str = "{x}", command: str = "python3 echo.py {input}") -> Path:
    """A project without a repository: echo.py prints its input; four cases expect ``expected``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "echo.py").write_text(ECHO)
    cases = "".join(
        f"  - {{id: c{i}, input: x{i}, checks: [{{type: equals, value: {expected.format(x=f'x{i}')}}}]}}\n"
        for i in range(4)
    )
    (root / "cases.yaml").write_text("cases:\n" + cases)
    (root / "assay.yaml").write_text(
        "artifact: {kind: code, paths: [echo.py], forbid: [cases.yaml, assay.yaml]}\n"
        "cases: {files: [cases.yaml]}\n"
        f"runner: {{type: command, command: '{command}', timeout: 60, sandbox: none}}\n"
    )
    return root


def test_0_eval_when_every_case_passes(tmp_path: Path) -> None:
    done = assay("eval", "-q", cwd=echo_project(tmp_path / "p"))
    assert done.returncode == OK == 0, done.stdout + done.stderr
    assert "pass rate 4/4" in done.stdout


def test_0_init_writing_a_starter(tmp_path: Path) -> None:
    (tmp_path / "reverse.py").write_text("import sys\nprint(sys.argv[1][::-1])\n")
    done = assay("init", cwd=tmp_path)
    assert done.returncode == OK, done.stderr
    assert done.stdout.startswith("wrote ") and "assay.yaml" in done.stdout.splitlines()[0]


def test_1_eval_with_failing_cases(tmp_path: Path) -> None:
    done = assay("eval", "-q", cwd=echo_project(tmp_path / "p", expected="not-{x}"))
    assert done.returncode == FAILING == 1, done.stdout + done.stderr
    assert "pass rate 0/4" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["evolve", "--no-such-option"], "No such option"),
        (["eval", "--split", "sideways"], "expected one of dev, holdout, regression, all"),
    ],
)
def test_2_a_usage_error(tmp_path: Path, args: list[str], message: str) -> None:
    done = assay(*args, cwd=echo_project(tmp_path / "p"))
    assert done.returncode == CONFIG == 2
    assert message in done.stderr


def test_2_a_configuration_error(tmp_path: Path) -> None:
    root = echo_project(tmp_path / "p")
    (root / "assay.yaml").write_text((root / "assay.yaml").read_text().replace("timeout: 60", "timeout: ten"))
    done = assay("eval", cwd=root)
    assert done.returncode == CONFIG
    assert done.stderr.strip().splitlines() == [
        "error: assay.yaml: runner.timeout: expected a number, got 'ten' (text: write a number without quotes)"
    ]


def test_2_a_refused_adoption(project: Path) -> None:
    overfit = record(3, dev_score=0.9, flags=[Flag.OVERFITTING])
    stored_run(project, [record(0), overfit]).close()
    done = assay("adopt", "best", cwd=project)
    assert done.returncode == CONFIG
    assert done.stdout == "" and "error: not adopted: cand-0003 was flagged overfitting" in done.stderr


def test_3_eval_at_a_dead_end(tmp_path: Path) -> None:
    root = echo_project(tmp_path / "p", command="python3 ehco.py {input}")
    done = assay("eval", "-q", cwd=root)
    assert done.returncode == COULD_NOT_RUN == 3, done.stdout + done.stderr
    assert "every case failed before the artifact ran" in done.stderr


def test_130_eval_interrupted(tmp_path: Path) -> None:
    started = tmp_path / "started"
    script = f"import pathlib, time\npathlib.Path({str(started)!r}).touch()\ntime.sleep(60)\n"
    root = echo_project(tmp_path / "p", command="python3 slow.py {input}")
    (root / "slow.py").write_text(script)
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "eval", "-q", "-j", "1"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As a terminal's Ctrl-C finds it: a shell runs a background job (`cmd &`, CI under nohup) with SIGINT
        # ignored, and Python then leaves it ignored, as it should.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert started.exists(), process.communicate()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == INTERRUPTED == 130, out + err
    assert "Traceback" not in err


# -- the rows that need a repository: init, evolve and adopt ----------------------------------------------------


@pytest.fixture
def binpack(tmp_path: Path) -> Path:
    root = tmp_path / "binpack"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".assay", "__pycache__"))
    assert assay("init", cwd=root).returncode == OK
    return root


def last_line(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout.rstrip().splitlines()[-1]


@pytest.mark.e2e
def test_0_evolve_with_a_gain_and_0_adopt(binpack: Path) -> None:
    done = assay("evolve", "-n", "3", cwd=binpack)
    assert done.returncode == OK, done.stdout + done.stderr
    assert "result: gain:" in done.stdout
    assert ": a gain" in last_line(done) and "`assay adopt best`" in last_line(done)
    adopted = assay("adopt", "best", "--force", cwd=binpack)  # the example's best may carry a caveat
    assert adopted.returncode == OK, adopted.stderr
    assert adopted.stdout.splitlines()[-1].startswith("adopted cand-")


@pytest.mark.e2e
def test_0_evolve_with_no_gain_stated_on_its_last_line(binpack: Path) -> None:
    done = assay("evolve", "-n", "1", cwd=binpack)
    assert done.returncode == OK, done.stdout + done.stderr
    assert "result: no gain:" in done.stdout
    assert last_line(done).endswith(": no gain, nothing to adopt (the best is the baseline)")


@pytest.mark.e2e
def test_3_evolve_and_init_at_a_dead_end(binpack: Path) -> None:
    config = binpack / "assay.yaml"
    config.write_text(config.read_text().replace("harness.py", "harnes.py"))
    as_user = ["-c", "user.name=u", "-c", "user.email=u@x"]
    subprocess.run(["git", *as_user, "commit", "-qam", "typo"], cwd=binpack, check=True, capture_output=True)
    init = assay("init", cwd=binpack)
    assert init.returncode == COULD_NOT_RUN, init.stdout + init.stderr
    assert "every case failed before the artifact ran" in init.stdout
    evolve = assay("evolve", "-n", "3", cwd=binpack)
    assert evolve.returncode == COULD_NOT_RUN, evolve.stdout + evolve.stderr
    assert "stopped: dead end: " in evolve.stdout and "0 generations" in evolve.stdout
    assert "a dead end" in last_line(evolve)


@pytest.mark.e2e
def test_130_evolve_interrupted(binpack: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "evolve", "-n", "500"],
        cwd=binpack,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:  # the first generation's line: the run is under way
        if line.startswith("gen "):
            break
    process.send_signal(signal.SIGINT)  # once: the run finishes this generation and stops
    out, err = process.communicate(timeout=120)
    assert process.returncode == INTERRUPTED, out + err
    assert "stopped: interrupted (Ctrl-C)" in out
    assert "`assay resume` continues it" in out.rstrip().splitlines()[-1]


def outcome(stop_reason: str, status: str = "finished") -> RunOutcome:
    return RunOutcome(
        run_id="r",
        stop_reason=stop_reason,
        generations=5,
        baseline=record(0),
        best=record(0),
        case_runs=10,
        seconds=1.0,
        status=status,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("stop_reason", "status", "exit_status"),
    [
        ("reached 5 generations", "finished", OK),
        ("plateau: no candidate kept in 25 generations", "finished", OK),
        # The run's dead-end rule: the proposer (or the runner) broke during the run.
        (
            "dead end: the last 5 candidates could not be proposed or evaluated (5 of 5: proposal failed: timeout)",
            "finished",
            COULD_NOT_RUN,
        ),
        ("dead end: c0: python3: can't open file 'clasify.py'", "finished", COULD_NOT_RUN),
        ("interrupted (Ctrl-C)", "stopped", INTERRUPTED),
        ("STOP file found", "stopped", INTERRUPTED),
    ],
)
def test_the_way_a_run_ended_is_its_exit_status(stop_reason: str, status: str, exit_status: int) -> None:
    assert run_status(outcome(stop_reason, status)) == exit_status


@pytest.mark.e2e
def test_130_evolve_stopped_by_a_stop_file(binpack: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "evolve", "-n", "500"],
        cwd=binpack,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("gen "):
            break
    (run_dir,) = (binpack / ".assay" / "runs").iterdir()
    (run_dir / "STOP").touch()
    out, err = process.communicate(timeout=120)
    assert process.returncode == INTERRUPTED, out + err
    assert "stopped: STOP file found" in out
