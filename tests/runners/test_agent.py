"""The agent runner with a fake agent CLI: a real script that edits the worktree like an agent would."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest

from assay.checks import CheckContext, build_check
from assay.config import AgentRunnerConfig
from assay.model import Case, CheckSpec
from assay.runners import RUNNERS
from assay.runners.agent import AgentRunner
from assay.runners.base import RunContext
from assay.runners.command import CommandRunner

FAKE_AGENT = f"""#!{sys.executable}
import os, subprocess, sys, time
args = sys.argv[1:]
prompt = args[args.index("-p") + 1]
if prompt == "hang":
    subprocess.Popen(["sleep", "30"])
    time.sleep(30)
with open("notes.md", "w") as f:
    f.write("# Notes\\n" + prompt + "\\n")
print("key:" + os.environ.get("ANTHROPIC_API_KEY", "none"))
print("done: wrote notes.md")
"""


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    script = tmp_path / "bin" / "fake-agent"
    script.parent.mkdir()
    script.write_text(FAKE_AGENT)
    script.chmod(0o755)
    return script


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    path = tmp_path / "worktree"
    path.mkdir()
    return path


def runner(agent: Path, worktree: Path, **options: object) -> AgentRunner:
    config = AgentRunnerConfig(command=f"{shlex.quote(str(agent))} -p {{input}}", **options)  # type: ignore[arg-type]
    return AgentRunner(config, RunContext(artifact_dir=worktree, project_dir=worktree))


def test_registered_and_reuses_the_command_runner() -> None:
    assert RUNNERS.get("agent") is AgentRunner
    assert issubclass(AgentRunner, CommandRunner)


def test_agent_defaults(agent: Path, worktree: Path) -> None:
    limits = runner(agent, worktree).limits
    assert limits.memory_mb is None
    assert limits.timeout_s == 600


async def test_agent_writes_into_the_worktree(agent: Path, worktree: Path) -> None:
    case = Case(id="a", input="Summarise the repo; don't $(rm -rf) anything")
    out = await runner(agent, worktree).run(case, worktree)
    assert out.error is None
    assert out.text == "key:none\ndone: wrote notes.md"
    assert out.workdir == str(worktree)
    assert out.cpu_s is None  # an agent mostly waits for its model: its time is judged by the wall clock
    assert (worktree / "notes.md").read_text() == f"# Notes\n{case.input}\n"

    check = build_check(CheckSpec(type="file_exists", value="notes.md"))
    result = await check.run(out, CheckContext(case=case))
    assert result.passed


async def test_agent_keys_pass_only_when_allowed(
    agent: Path, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "agent-key-value")
    case = Case(id="a", input="go")
    hidden = await runner(agent, worktree).run(case, worktree)
    assert hidden.text.startswith("key:none")
    allowed = await runner(agent, worktree, env_allow=["ANTHROPIC_API_KEY"]).run(case, worktree)
    assert allowed.text.startswith("key:agent-key-value")


async def test_hanging_agent_and_its_children_are_killed(agent: Path, worktree: Path) -> None:
    start = time.perf_counter()
    out = await runner(agent, worktree, timeout=0.5).run(Case(id="a", input="hang"), worktree)
    assert time.perf_counter() - start < 5
    assert out.timed_out
    assert not (worktree / "notes.md").exists()
