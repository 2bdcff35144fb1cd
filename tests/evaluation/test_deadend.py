"""A runner broken before the artifact runs is a dead end: said once, and evolve does not start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assay.evaluation.deadend import dead_end
from assay.evaluation.evaluator import EvalResult
from assay.model import CaseResult, Output, Split

MISSING = "/usr/bin/python3: can't open file '/p/clasify.py': [Errno 2] No such file or directory"


def result(*outputs: Output, passed: bool = False) -> EvalResult:
    cases = [
        CaseResult(id=f"c{i}", split=Split.DEV, passed=passed, score=0.0, output=output)
        for i, output in enumerate(outputs)
    ]
    return EvalResult(cases=cases)


def failed(stderr: str = "", exit_code: int = 2, error: str | None = "exit code 2") -> Output:
    return Output(stderr_tail=stderr, exit_code=exit_code, error=error)


def test_a_missing_runner_file_on_every_case_is_a_dead_end() -> None:
    found = dead_end(result(failed(MISSING), failed(MISSING)), ["classify.py"])
    assert found is not None and found.case_id == "c0" and found.error == MISSING
    assert found.lines()[1] == f"  first error (c0): {MISSING}"


@pytest.mark.parametrize(
    "output",
    [
        failed("sh: 1: clasify: not found", exit_code=127),
        failed("", exit_code=126),
        failed(
            "", exit_code=None, error="cannot start the runner: [Errno 2] No such file or directory: 'node'"
        ),
        failed("ModuleNotFoundError: No module named 'numpy'"),
    ],
)
def test_other_harness_errors(output: Output) -> None:
    assert dead_end(result(output, output), ["classify.py"]) is not None


@pytest.mark.parametrize(
    ("outputs", "why"),
    [
        (
            [failed('Traceback (most recent call last):\n  File "/p/classify.py", line 3\nValueError: x')]
            * 2,
            "the artifact itself crashes: a legitimate target",
        ),
        ([failed(MISSING), failed("", exit_code=1, error="exit code 1")], "one case failed otherwise"),
        (
            [failed("classify.py: line 2: data.txt: No such file or directory")] * 2,
            "the artifact's own error",
        ),
        ([failed("key not found")] * 2, "an artifact's message, not the harness's"),
        ([Output(text="wrong"), Output(text="wrong")], "the artifact ran and answered"),
        ([], "no case"),
    ],
)
def test_not_a_dead_end(outputs: list[Output], why: str) -> None:
    assert dead_end(result(*outputs), ["classify.py"]) is None, why


ECHO = "import sys\nprint(sys.argv[1])\n"


def _files(root: Path, command: str, artifact: str, runner: str = "") -> Path:
    """A project whose artifact ``classify.py`` should echo its input, run by ``command``."""
    root.mkdir(exist_ok=True)
    (root / "classify.py").write_text(artifact)
    (root / "cases.yaml").write_text(
        "cases:\n"
        + "".join(
            f"  - {{id: c{i}, input: x{i}, checks: [{{type: equals, value: x{i}}}]}}\n" for i in range(4)
        )
    )
    (root / "assay.yaml").write_text(
        "artifact: {kind: code, paths: [classify.py], forbid: [cases.yaml, assay.yaml]}\n"
        f"cases: {{files: [cases.yaml]}}\nrunner: {{type: command, command: '{command}', timeout: 10{runner}}}\n"
        "tiers: {static: false}\n"
    )
    return root


def _assay(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=root, capture_output=True, text=True, timeout=300
    )


def test_eval_says_so_in_one_block(tmp_path: Path) -> None:
    root = _files(tmp_path, "python3 clasify.py {input}", ECHO, runner=", sandbox: none")
    done = _assay(root, "eval", "-q")
    assert done.returncode == 3  # could not run: the runner is broken
    assert "every case failed before the artifact ran" in done.stderr
    assert "first error (c0): " in done.stderr and "clasify.py" in done.stderr
    (root / "assay.yaml").write_text((root / "assay.yaml").read_text().replace("clasify", "classify"))
    fixed = _assay(root, "eval", "-q")
    assert fixed.returncode == 0 and "every case failed" not in fixed.stderr


def _project(root: Path, command: str, artifact: str) -> Path:
    _files(root, command, artifact)
    (root / ".gitignore").write_text(".assay/\n__pycache__/\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=root, check=True)
    return root


@pytest.mark.e2e
def test_evolve_stops_at_a_dead_end_but_evolves_a_crashing_artifact(tmp_path: Path) -> None:
    broken = _project(tmp_path / "broken", "python3 clasify.py {input}", ECHO)
    done = _assay(broken, "evolve", "-n", "5")
    assert done.returncode == 3, done.stderr  # could not run
    assert "stopped: dead end: c" in done.stdout and "0 generations" in done.stdout
    assert "clasify.py" in done.stdout and "nothing to adopt" in done.stdout
    assert (
        done.stdout.rstrip()
        .splitlines()[-1]
        .endswith("the run could not go on (a dead end: fix what the stop reason names)")
    )
    crashing = _project(tmp_path / "crashing", "python3 classify.py {input}", "raise SystemExit(1 / 0)\n")
    done = _assay(crashing, "evolve", "-n", "2")
    assert done.returncode == 0, done.stderr
    assert "dead end" not in done.stdout and "2 generations" in done.stdout, done.stdout
