"""One suite every registered runner must pass: built from a minimal config (``MINIMAL``: a runner registered
later must add its own), it runs a trivial case the fast way (plain processes without the jail, the scripted
model server for ``llm``) and its optional parts (sandbox, concurrency, release, close) work."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay.config import AgentRunnerConfig, CommandRunnerConfig, LLMRunnerConfig, PythonRunnerConfig
from assay.extensions import RUNNER, resolve
from assay.model import Case, Output
from assay.protocols import RunnerProtocol
from assay.runners import RUNNERS, RunContext, Runner
from tests.fakes.llm_server import ScriptedLLMServer

NAMES = RUNNERS.names()
CASE = Case(id="hello", input="hello")
PY = shlex.quote(sys.executable)
AGENT = f"#!{sys.executable}\nimport sys\nprint('agent says ' + sys.argv[-1])\n"


def command(workdir: Path, request: pytest.FixtureRequest) -> Any:
    return CommandRunnerConfig(command=f"{PY} -c 'import sys; print(sys.argv[1])' {{input}}")


def python(workdir: Path, request: pytest.FixtureRequest) -> Any:
    (workdir / "solver.py").write_text("def solve(case, artifact_dir):\n    return case.input\n")
    return PythonRunnerConfig(function="solver:solve")


def llm(workdir: Path, request: pytest.FixtureRequest) -> Any:
    server: ScriptedLLMServer = request.getfixturevalue("llm_server")
    server.default = "hello"
    (workdir / "prompt.md").write_text("Repeat the input.")
    return LLMRunnerConfig(
        model="openai:gpt-4o-mini", base_url=server.openai_url, prompt="prompt.md", max_retries=0
    )


def agent(workdir: Path, request: pytest.FixtureRequest) -> Any:
    script = workdir.parent / "fake-agent"
    script.write_text(AGENT)
    script.chmod(0o755)
    return AgentRunnerConfig(command=f"{shlex.quote(str(script))} -p {{input}}")


MINIMAL: dict[str, Callable[[Path, pytest.FixtureRequest], Any]] = {
    "command": command,
    "python": python,
    "llm": llm,
    "agent": agent,
}


async def check_runner(runner: Runner, workdir: Path) -> None:
    """The contract: conforms, turns a trivial case into an Output that carries the input, says how it runs
    (``sandbox``), gives a positive default concurrency, and releases and closes without error."""
    assert isinstance(runner, RunnerProtocol) and resolve(RUNNER, runner) is runner
    output = await runner.run(CASE, workdir)
    assert isinstance(output, Output)
    assert output.error is None and "hello" in output.text, output
    assert runner.sandbox in (None, "none", "strict")
    assert runner.default_concurrency() >= 1
    await runner.release(workdir)
    await runner.aclose()


def build(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Runner, Path]:
    workdir = tmp_path / "artifact"
    workdir.mkdir()
    assert name in MINIMAL, f"add a minimal config for the runner {name!r} to MINIMAL"
    config = MINIMAL[name](workdir, request)
    return resolve(RUNNER, name, config, RunContext(artifact_dir=workdir, project_dir=workdir)), workdir


@pytest.mark.parametrize("name", NAMES)
async def test_registered_runner_conforms(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    runner, workdir = build(name, tmp_path, request)
    await check_runner(runner, workdir)


def test_every_runner_is_in_the_suite() -> None:
    assert set(NAMES) == set(MINIMAL)


class Shout(Runner):
    """A dummy runner: the input in capitals, with no process."""

    name = "shout"
    io_bound = True

    async def run(self, case: Case, workdir: Path) -> Output:
        return Output(text=f"{case.input} {str(case.input).upper()}", exit_code=0)


async def test_a_registered_dummy_joins_the_suite(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    monkeypatch.setitem(RUNNERS._items, "shout", Shout)
    monkeypatch.setitem(MINIMAL, "shout", lambda workdir, request: None)
    assert "shout" in RUNNERS.names()
    runner, workdir = build("shout", tmp_path, request)
    await check_runner(runner, workdir)
