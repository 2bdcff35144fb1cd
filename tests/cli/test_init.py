"""`assay init` starts a user off: the starter files for an empty folder, a script, a prompt or a skill, through
the real command in a subprocess; existing files are never overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.config import LLMRunnerConfig, load_config
from assay.install import install_hint
from tests.cli.conftest import assay

# The fast layer runs these without the jail (as on a machine without bubblewrap): the jail is not what they
# test; tests/sandbox and the e2e attack tests prove it.
pytestmark = pytest.mark.usefixtures("no_bwrap")


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.mark.e2e
def test_empty_folder_gets_a_placeholder_program_that_evaluates(tmp_path: Path) -> None:
    first = assay("init", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["assay.yaml", "cases.yaml", "program.py"]
    assert "next: `assay eval`" in first.stdout
    assert not (tmp_path / ".git").exists(), "the starter step commits nothing"
    evaluated = assay("eval", cwd=tmp_path)
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    assert "pass rate 2/2" in evaluated.stdout
    before = snapshot(tmp_path)
    second = assay("init", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "created a git repository" in second.stdout and "baseline dev" in second.stdout
    assert snapshot(tmp_path) | {".gitignore": b""} == before | {".gitignore": b""}
    assert assay("init", cwd=tmp_path).returncode == 0
    assert snapshot(tmp_path) | {".gitignore": b""} == before | {".gitignore": b""}


def test_a_script_is_the_artifact_and_runs_with_no_edits(tmp_path: Path) -> None:
    script = "import sys\nprint(sys.argv[1][::-1])\n"
    (tmp_path / "reverse.py").write_text(script)
    (tmp_path / "README.md").write_text("# my tool\n")
    init = assay("init", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    config = load_config(tmp_path / "assay.yaml")
    assert config.artifact.paths == ["reverse.py"] and config.artifact.kind == "code"
    assert config.runner.type == "command" and "reverse.py {input}" in config.runner.command
    evaluated = assay("eval", cwd=tmp_path)
    assert evaluated.returncode == 0 and "pass rate 2/2" in evaluated.stdout, evaluated.stdout
    assert (tmp_path / "reverse.py").read_text() == script


def test_a_crashing_script_fails_the_starter_cases(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("raise SystemExit('no')\n")
    assert assay("init", cwd=tmp_path).returncode == 0
    evaluated = assay("eval", cwd=tmp_path)
    assert evaluated.returncode == 1 and "pass rate 0/2" in evaluated.stdout, evaluated.stdout


def test_existing_cases_are_used_and_kept(tmp_path: Path) -> None:
    (tmp_path / "echo.sh").write_text('echo "$1"\n')
    cases = "cases:\n  - id: says-hi\n    input: hi\n    checks: [{type: equals, value: hi}]\n"
    (tmp_path / "cases.yaml").write_text(cases)
    assert assay("init", cwd=tmp_path).returncode == 0
    assert (tmp_path / "cases.yaml").read_text() == cases
    assert load_config(tmp_path / "assay.yaml").runner.command.startswith("bash echo.sh")
    evaluated = assay("eval", cwd=tmp_path)
    assert evaluated.returncode == 0 and "says-hi" in evaluated.stdout


def test_a_prompt_names_the_one_line_to_set(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# notes\n")
    (tmp_path / "support.md").write_text("You answer customer questions politely.\n")
    init = assay("init", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    assert "set runner.model" in init.stdout
    text = (tmp_path / "assay.yaml").read_text()
    assert "paths: [support.md]" in text and "local:gemma3-270m" in text
    for command in (("eval",), ("init",)):
        done = assay(*command, cwd=tmp_path)
        assert done.returncode == 2, done.stdout
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "runner.model: not set" in lines[0], done.stderr
        assert "local:gemma3-270m" in lines[0] and install_hint("local") in lines[0]
    assert not (tmp_path / ".git").exists(), "a failed init commits nothing"
    (tmp_path / "assay.yaml").write_text(text.replace("  model:\n", "  model: openai:gpt-4o-mini\n"))
    runner = load_config(tmp_path / "assay.yaml").runner
    assert isinstance(runner, LLMRunnerConfig) and runner.model == "openai:gpt-4o-mini"
    assert runner.prompt == "support.md"


TRIAGE = "You are a support assistant. Reply with one word: billing, shipping, technical or product.\n"


def test_a_local_model_gets_a_completion_starter_built_from_the_users_dev_cases(tmp_path: Path) -> None:
    labels = ["billing", "shipping", "technical", "product"]
    (tmp_path / "prompt.md").write_text(TRIAGE)
    (tmp_path / "cases.yaml").write_text(
        "cases:\n"
        + "".join(
            f"  - {{id: m{i:02d}, input: 'message {i}', expected: {labels[i % 4]}}}\n" for i in range(24)
        )
    )
    init = assay("init", "--model", "local:gemma3-270m", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    assert (
        "prompt.local.txt, prompt.pool.txt, assay.yaml" in init.stdout
        and "prompt.md is unchanged" in init.stdout
    )
    assert (tmp_path / "prompt.md").read_text() == TRIAGE
    config = load_config(tmp_path / "assay.yaml")
    runner = config.runner
    assert isinstance(runner, LLMRunnerConfig) and runner.mode == "template"
    assert (
        runner.model == "local:gemma3-270m?stop=%0A" and runner.max_tokens <= 16 and runner.temperature == 0
    )
    assert config.artifact.paths == ["prompt.local.txt", "prompt.pool.txt"]
    assert [c.type for c in config.checks] == ["equals"]
    prompt = (tmp_path / "prompt.local.txt").read_text()
    assert prompt.startswith(TRIAGE) and prompt.endswith("Input: {{input}}\nLabel:\n")
    shown = [line.split(": ", 1)[1] for line in prompt.splitlines() if line.startswith("Label: ")]
    assert set(shown[:4]) == set(labels)
    assert not (tmp_path / ".git").exists()


def test_an_api_model_fills_the_one_line_and_a_project_refuses_model(tmp_path: Path) -> None:
    (tmp_path / "support.md").write_text("You answer customer questions politely.\n")
    init = assay("init", "--model", "openai:gpt-4o-mini", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    runner = load_config(tmp_path / "assay.yaml").runner
    assert isinstance(runner, LLMRunnerConfig) and runner.model == "openai:gpt-4o-mini"
    assert runner.mode == "system" and "set runner.model" not in init.stdout
    again = assay("init", "--model", "local:gemma3-270m", cwd=tmp_path)
    assert again.returncode == 2 and "set runner.model in it instead" in again.stderr


@pytest.mark.parametrize("evals", [False, True])
def test_a_skill_gets_an_agent_runner(tmp_path: Path, evals: bool) -> None:
    (tmp_path / "SKILL.md").write_text("---\nname: demo\ndescription: A demo skill.\n---\nDo the thing.\n")
    if evals:
        (tmp_path / "evals").mkdir()
        (tmp_path / "evals" / "evals.json").write_text(
            '{"skill_name": "demo", "evals": [{"id": 1, "prompt": "do it", "expectations": ["[contains] done"]}]}'
        )
    assert assay("init", cwd=tmp_path).returncode == 0
    config = load_config(tmp_path / "assay.yaml")
    assert config.artifact.kind == "skill" and config.runner.type == "agent"
    assert config.cases.files == (["evals/evals.json"] if evals else ["cases.yaml"])
    assert (tmp_path / config.cases.files[0]).is_file()


SKILL_EVALS = """{"skill_name": "demo", "evals": [
 {"id": 1, "prompt": "do it", "expectations": ["[contains] done", "The answer explains why"]},
 {"id": 2, "prompt": "do more", "expectations": ["[script_check] gradeit --strict out.json"]}
]}"""


def test_a_skill_starter_names_everything_it_needs_in_one_message(tmp_path: Path) -> None:
    # The skill took four `assay eval` tries to learn a judge model, an API key, the llm extra and the
    # program its checks call were needed: the starter names them at once.
    (tmp_path / "SKILL.md").write_text("---\nname: demo\ndescription: A demo skill.\n---\nDo the thing.\n")
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "evals.json").write_text(SKILL_EVALS)
    keys = {name: "" for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY")}
    done = assay("init", cwd=tmp_path, env={**keys, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index("  before `assay eval` can run its cases, this project needs:")
    needs = [line for line in lines[start + 1 :] if line.startswith("  - ")]
    assert (
        needs[0].startswith("  - a judge model: 1 case has checks a model judges")
        and "judge.model" in needs[0]
    )
    assert needs[1].startswith(
        "  - an API key for the judge's provider in the environment: ANTHROPIC_API_KEY"
    )
    assert "  - programs the checks call, not found on PATH: gradeit" in needs
    assert any(n.startswith("  - the agent CLI the runner calls, not found on PATH: claude") for n in needs)
    assert lines[start + 1 + len(needs)].startswith("next: ")  # one block, then the next step


def test_a_missing_llm_extra_and_judge_key_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from assay.config import AssayConfig, JudgeConfig
    from assay.model import Case, CheckSpec
    from assay.starters.needs import project_needs

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "anthropic" else real(name))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    config = AssayConfig.model_validate(
        {
            "artifact": {"paths": ["SKILL.md"]},
            "cases": {"files": ["cases.yaml"]},
            "runner": {"type": "command", "command": "python3 run.py {input}"},
            "judge": {"model": "anthropic:claude-haiku-4-5"},
        }
    )
    case = Case(id="a", input="x", checks=[CheckSpec(type="llm_judge", value="polite")])
    assert isinstance(config.judge, JudgeConfig)
    needs = project_needs(config, [case])
    assert (
        needs[0]
        == "the API key of the judge (anthropic:claude-haiku-4-5): ANTHROPIC_API_KEY is not set in the environment"
    )
    assert needs[1].startswith("the llm extra, for the judge (anthropic not installed): pip install")
    assert (
        project_needs(config, [case.model_copy(update={"checks": [CheckSpec(type="contains", value="x")]})])
        == []
    )
