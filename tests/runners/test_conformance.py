"""Every registered runner passes the runner suite (:func:`assay.testing.runners.check_runner`), built as the
evaluator builds it (``resolve(RUNNER, name, config, context)``) from a minimal config that echoes the input
(``MINIMAL``: a runner registered later adds its own), the fast way: plain processes without the jail, the
scripted model server for ``llm``."""

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
from assay.runners import RUNNERS, RunContext, Runner
from assay.testing.runners import check_runner
from tests.fakes.llm_server import ScriptedLLMServer

NAMES = RUNNERS.names()
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


def build(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Callable[[], Runner], Path]:
    """How to make the runner ``name`` from its minimal config, and the artifact folder it runs in."""
    workdir = tmp_path / "artifact"
    workdir.mkdir()
    assert name in MINIMAL, f"add a minimal config for the runner {name!r} to MINIMAL"
    config = MINIMAL[name](workdir, request)
    context = RunContext(artifact_dir=workdir, project_dir=workdir)
    return lambda: resolve(RUNNER, name, config, context), workdir


@pytest.mark.parametrize("name", NAMES)
async def test_registered_runner_conforms(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    make, workdir = build(name, tmp_path, request)
    await check_runner(make, workdir)


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
    make, workdir = build("shout", tmp_path, request)
    await check_runner(make, workdir)


class Mute(Shout):
    async def run(self, case: Case, workdir: Path) -> Output:
        return Output(text="")


async def test_the_suite_names_what_a_broken_runner_breaks(tmp_path: Path) -> None:
    with pytest.raises(
        AssertionError, match="runner Mute: the output does not carry the case's input 'hello'"
    ):
        await check_runner(lambda: Mute(None, RunContext(tmp_path, tmp_path)), tmp_path)
