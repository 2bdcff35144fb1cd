"""The python runner: candidate functions run in a real worker subprocess."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest

from assay.config import PythonRunnerConfig
from assay.model import Case, CheckSpec
from assay.runners import RUNNERS
from assay.runners.base import RunContext
from assay.runners.python import PythonRunner

SOLVER = """
import asyncio
import os
import sys

from helper import shout


def solve(case, artifact_dir):
    return f"{case.id}|{case.text}|{case.vars.get('n')}|{artifact_dir.name}|{shout(case.input or '')}"


def boom(case, artifact_dir):
    raise ValueError("boom " + case.id)


def as_dict(case, artifact_dir):
    return {"tags": case.tags, "vars": case.vars, "seen": sorted(vars(case))}


def answer(case, artifact_dir):
    return 42


def nothing(case, artifact_dir):
    return None


def noisy(case, artifact_dir):
    print("printed by the candidate")
    os.write(1, b"raw write to fd 1\\n")
    return "clean"


async def later(case, artifact_dir):
    await asyncio.sleep(0.01)
    return "async " + case.id


def nul_bytes(case, artifact_dir):
    return b"ab\\x00cd"


def big(case, artifact_dir):
    return "z" * 50_000_000


def slow(case, artifact_dir):
    import time
    time.sleep(10)


def hard_exit(case, artifact_dir):
    os._exit(3)


def segfault(case, artifact_dir):
    import signal
    os.kill(os.getpid(), signal.SIGKILL)


def exits(case, artifact_dir):
    sys.exit(5)


def env(case, artifact_dir):
    return os.environ.get("OPENAI_API_KEY", "unset")


def cwd(case, artifact_dir):
    return os.getcwd()


class Tools:
    @staticmethod
    def upper(case, artifact_dir):
        return case.text.upper()


not_callable = 3
"""


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    root = tmp_path / "artifact"
    root.mkdir()
    (root / "solver.py").write_text(textwrap.dedent(SOLVER))
    (root / "helper.py").write_text("def shout(text):\n    return text.upper()\n")
    (root / "broken.py").write_text("def oops(:\n")
    return root


def runner(artifact: Path, function: str, **options: object) -> PythonRunner:
    config = PythonRunnerConfig(function=function, **options)  # type: ignore[arg-type]
    return PythonRunner(config, RunContext(artifact_dir=artifact, project_dir=artifact))


CASE = Case(id="c1", input="hi there", vars={"n": 7}, tags=["t"], expected="SECRET-EXPECTED")


async def test_registered_by_name() -> None:
    assert RUNNERS.get("python") is PythonRunner


async def test_happy_path(artifact: Path) -> None:
    out = await runner(artifact, "solver:solve").run(CASE, artifact)
    assert out.error is None
    assert out.text == "c1|hi there|7|artifact|HI THERE"
    assert out.exit_code == 0
    assert out.workdir == str(artifact)


async def test_runs_in_the_workdir(artifact: Path) -> None:
    out = await runner(artifact, "solver:cwd").run(CASE, artifact)
    assert out.text == str(artifact.resolve())


async def test_exception_becomes_error_with_traceback(artifact: Path) -> None:
    out = await runner(artifact, "solver:boom").run(CASE, artifact)
    assert out.error == "ValueError: boom c1"
    assert "solver.py" in out.meta["traceback"]
    assert "_python_worker" not in out.meta["traceback"]
    assert "ValueError: boom c1" in out.stderr_tail
    assert out.text == ""


async def test_missing_module(artifact: Path) -> None:
    out = await runner(artifact, "nowhere:solve").run(CASE, artifact)
    assert out.error == "cannot import module 'nowhere': No module named 'nowhere'"


async def test_module_with_syntax_error(artifact: Path) -> None:
    out = await runner(artifact, "broken:oops").run(CASE, artifact)
    assert out.error is not None
    assert out.error.startswith("error importing 'broken': SyntaxError")


async def test_missing_and_non_callable_attribute(artifact: Path) -> None:
    missing = await runner(artifact, "solver:nope").run(CASE, artifact)
    assert missing.error == "'solver:nope': 'solver' has no attribute 'nope'"
    value = await runner(artifact, "solver:not_callable").run(CASE, artifact)
    assert value.error == "'solver:not_callable' is not callable"


async def test_dotted_attribute(artifact: Path) -> None:
    out = await runner(artifact, "solver:Tools.upper").run(CASE, artifact)
    assert out.text == "HI THERE"


async def test_non_str_results_are_json(artifact: Path) -> None:
    out = await runner(artifact, "solver:as_dict").run(CASE, artifact)
    data = json.loads(out.text)
    assert data["tags"] == ["t"] and data["vars"] == {"n": 7}
    assert (await runner(artifact, "solver:answer").run(CASE, artifact)).text == "42"
    assert (await runner(artifact, "solver:nothing").run(CASE, artifact)).text == "null"


async def test_checks_and_expected_are_withheld(artifact: Path) -> None:
    case = CASE.model_copy(update={"checks": [CheckSpec(type="contains", value="HIDDEN-CHECK")]})
    out = await runner(artifact, "solver:as_dict").run(case, artifact)
    assert json.loads(out.text)["seen"] == ["id", "input", "tags", "text", "vars"]
    assert "SECRET-EXPECTED" not in out.text and "HIDDEN-CHECK" not in out.text


async def test_prints_do_not_corrupt_the_output(artifact: Path) -> None:
    out = await runner(artifact, "solver:noisy").run(CASE, artifact)
    assert out.text == "clean"
    assert "printed by the candidate" in out.stderr_tail
    assert "raw write to fd 1" in out.stderr_tail


async def test_async_function(artifact: Path) -> None:
    out = await runner(artifact, "solver:later").run(CASE, artifact)
    assert out.text == "async c1"


async def test_binary_result_is_flagged(artifact: Path) -> None:
    out = await runner(artifact, "solver:nul_bytes").run(CASE, artifact)
    assert out.binary
    assert out.text == "ab\\x00cd"


async def test_huge_result_is_truncated(artifact: Path) -> None:
    start = time.perf_counter()
    out = await runner(artifact, "solver:big", max_output_bytes=1000).run(CASE, artifact)
    assert time.perf_counter() - start < 10
    assert out.truncated
    assert out.text == "z" * 1000
    assert out.error is None


async def test_timeout(artifact: Path) -> None:
    start = time.perf_counter()
    out = await runner(artifact, "solver:slow", timeout=0.3).run(CASE, artifact)
    assert time.perf_counter() - start < 3
    assert out.timed_out
    assert out.error == "timed out after 0.3s"


async def test_crashes(artifact: Path) -> None:
    hard = await runner(artifact, "solver:hard_exit").run(CASE, artifact)
    assert hard.error == "exit code 3"
    killed = await runner(artifact, "solver:segfault").run(CASE, artifact)
    assert killed.error == "killed by signal SIGKILL"
    exited = await runner(artifact, "solver:exits").run(CASE, artifact)
    assert exited.error == "SystemExit: 5"


async def test_secrets_are_scrubbed(artifact: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-secret-value")
    hidden = await runner(artifact, "solver:env").run(CASE, artifact)
    assert hidden.text == "unset"
    allowed = await runner(artifact, "solver:env", env_allow=["OPENAI_API_KEY"]).run(CASE, artifact)
    assert allowed.text == "test-secret-value"


@pytest.mark.parametrize("ref", ["solver", "solver:", ":solve", "solver:solve()", "my-mod:f", "a b:c"])
def test_bad_function_reference(artifact: Path, ref: str) -> None:
    with pytest.raises(ValueError, match=r"runner\.function: expected 'module:function'"):
        runner(artifact, ref)
