"""The in-process stand-in for the command runner (tests/fakes/inprocess_runner.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.config import CommandRunnerConfig
from assay.model import Case
from assay.runners.base import RunContext
from tests.fakes.inprocess_runner import InProcessRunner

SCRIPT = """
import sys
from helper import value
if sys.argv[1] == "fail":
    raise ValueError("boom")
if sys.argv[1] == "exit":
    sys.exit(3)
print(value, sys.argv[1])
"""


def workdir(root: Path, value: str) -> Path:
    root.mkdir()
    (root / "main.py").write_text(SCRIPT)
    (root / "helper.py").write_text(f"value = {value!r}\n")
    return root


def runner(root: Path) -> InProcessRunner:
    config = CommandRunnerConfig(type="command", command="python main.py {vars.word}")
    return InProcessRunner(config, RunContext(artifact_dir=root, project_dir=root))


def case(word: str) -> Case:
    return Case(id=word, vars={"word": word})


async def test_each_workdir_runs_its_own_modules(tmp_path: Path) -> None:
    first, second = workdir(tmp_path / "a", "one"), workdir(tmp_path / "b", "two")
    run = runner(first)
    assert (await run.run(case("hi"), first)).text == "one hi"
    assert (await run.run(case("there"), second)).text == "two there"
    assert (await run.run(case("again"), first)).text == "one again"
    assert run.cases_run == 3


@pytest.mark.parametrize(("word", "error"), [("fail", "ValueError: boom"), ("exit", "exit code 3")])
async def test_a_failing_script_is_a_failed_output(tmp_path: Path, word: str, error: str) -> None:
    root = workdir(tmp_path / "a", "one")
    output = await runner(root).run(case(word), root)
    assert output.error == error and not output.ok


async def test_only_python_scripts(tmp_path: Path) -> None:
    config = CommandRunnerConfig(type="command", command="echo {vars.word}")
    with pytest.raises(ValueError, match="python SCRIPT"):
        await InProcessRunner(config, RunContext(artifact_dir=tmp_path, project_dir=tmp_path)).run(
            case("x"), tmp_path
        )
