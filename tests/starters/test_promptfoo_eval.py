"""``assay eval -c promptfooconfig.yaml`` in a promptfoo-only folder: the suite runs as ``assay init`` would set
it up, and nothing is written beside it but the data directory an evaluation always writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import assay
from assay.config import LLMRunnerConfig, PythonRunnerConfig, load_config
from assay.errors import ConfigError
from assay.starters.promptfoo import plan_promptfoo
from assay.starters.promptfoo_eval import load_eval_config
from tests.cases._helpers import one_line, write
from tests.cli.conftest import assay as assay_cli

ANSWER = """\
import sys
prompt = sys.argv[1]
print("Paris" if "France" in prompt else "I do not know")
"""
TESTS = """\
- vars: {country: France}
  assert: [{type: contains, value: Paris}]
- vars: {country: Peru}
  assert: [{type: contains, value: Lima}]
- vars: {country: Italy}
  assert: [{type: icontains, value: know}]
"""


def promptfoo_folder(root: Path, *, prompts: str, providers: str = "  - exec: python3 answer.py\n") -> Path:
    write(root / "answer.py", ANSWER)
    write(root / "tests.yaml", TESTS)
    return write(
        root / "promptfooconfig.yaml", f"prompts:\n{prompts}providers:\n{providers}tests: file://tests.yaml\n"
    )


def files(root: Path) -> dict[str, bytes]:
    """Every file outside the data directory, with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".assay" not in p.relative_to(root).parts
    }


@pytest.mark.usefixtures("no_bwrap")
def test_an_inline_prompt_suite_runs_and_writes_nothing_beside_it(tmp_path: Path) -> None:
    config = promptfoo_folder(tmp_path, prompts="  - 'What is the capital of {{country}}?'\n")
    before = files(tmp_path)
    loaded = load_eval_config(config)
    # the runner assay init would write: the provider through the bridge, the prompt as the artifact
    plan = plan_promptfoo(tmp_path, config)
    assert plan.prompts == ["prompts/prompt-1.txt"] and plan.bridge is not None
    runner = loaded.config.runner
    assert isinstance(runner, PythonRunnerConfig) and runner.function == "assay.cases.promptfoo_bridge:run"
    assert runner.read_only == ["answer.py"] and runner.network
    kept = ".assay/promptfoo/prompts/prompt-1.txt"
    assert loaded.config.artifact.paths == [kept] and kept in loaded.config.artifact.forbid
    assert (tmp_path / kept).read_text() == "What is the capital of {{country}}?\n"
    assert loaded.promptfoo and loaded.lines[0].startswith("promptfooconfig.yaml: a promptfoo config, run as")
    result = assay.evaluate(config)
    assert (result.passed, result.total) == (2, 3)
    assert {c.id: c.passed for c in result.cases} == {"tests-1": True, "tests-2": False, "tests-3": True}
    assert files(tmp_path) == before


def test_a_file_prompt_is_the_artifact_where_it_is(tmp_path: Path) -> None:
    write(tmp_path / "prompt.txt", "Capital of {{country}}?\n")
    loaded = load_eval_config(promptfoo_folder(tmp_path, prompts="  - file://prompt.txt\n"))
    assert loaded.config.artifact.paths == ["prompt.txt"]
    call = json.loads(loaded.config.runner.env["ASSAY_PROMPTFOO_PROVIDER"])  # type: ignore[union-attr]
    assert call == {
        "function": "exec_provider",
        "arguments": {"prompt": "prompt.txt", "command": "python3 answer.py", "config": {}},
    }
    assert not (tmp_path / ".assay").exists()  # nothing to keep: no data directory yet


def test_without_assay_yaml_the_folder_s_promptfoo_config_is_used(tmp_path: Path) -> None:
    promptfoo_folder(tmp_path, prompts="  - '{{country}}'\n")
    loaded = load_eval_config(tmp_path / "assay.yaml")
    assert loaded.config.path == (tmp_path / "promptfooconfig.yaml").resolve()
    assert loaded.lines[0].startswith("no assay.yaml: promptfooconfig.yaml: a promptfoo config")


def test_an_assay_yaml_is_read_as_before(tmp_path: Path) -> None:
    # a misspelt section of an assay.yaml is still an unknown field with its closest name, not a promptfoo config
    write(tmp_path / "p.txt", "hi\n")
    write(tmp_path / "cases.yaml", "cases: [{id: a, input: x}]\n")
    config = write(
        tmp_path / "assay.yaml",
        "artifact: {paths: [p.txt]}\ncases: {files: [cases.yaml]}\nruner: {type: command, command: cat}\n",
    )
    with pytest.raises(ConfigError) as info:
        load_eval_config(config)
    one_line(info, "assay.yaml: runer: unknown field; did you mean 'runner'?")


def test_other_commands_point_a_promptfoo_config_to_eval_and_init(tmp_path: Path) -> None:
    config = promptfoo_folder(tmp_path, prompts="  - '{{country}}'\n")
    with pytest.raises(ConfigError) as info:
        load_config(config)
    one_line(info, "a promptfoo config, not an assay.yaml: `assay eval -c promptfooconfig.yaml` runs it")


def test_a_model_provider_without_its_key_names_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = promptfoo_folder(tmp_path, prompts="  - '{{country}}'\n", providers="  - openai:gpt-4o-mini\n")
    loaded = load_eval_config(config)
    assert isinstance(loaded.config.runner, LLMRunnerConfig)
    assert loaded.config.runner.prompt == ".assay/promptfoo/prompts/prompt-1.txt"
    with pytest.raises(ConfigError) as info:
        assay.evaluate(config)
    one_line(info, "promptfooconfig.yaml: providers[0]: ", "OPENAI_API_KEY is not set", "'openai'")


def test_a_graded_assertion_without_a_grader_names_promptfoo_s_field(tmp_path: Path) -> None:
    config = promptfoo_folder(tmp_path, prompts="  - '{{country}}'\n")
    write(
        tmp_path / "tests.yaml",
        "- vars: {country: France}\n  assert: [{type: llm-rubric, value: is a city}]\n",
    )
    with pytest.raises(ConfigError) as info:
        assay.evaluate(config)
    one_line(info, "defaultTest.options.provider: model-graded assertions", "need a grading model")


def test_a_provider_with_no_equivalent_is_one_line(tmp_path: Path) -> None:
    config = promptfoo_folder(tmp_path, prompts="  - '{{country}}'\n", providers="  - bedrock:claude\n")
    with pytest.raises(ConfigError) as info:
        load_eval_config(config)
    one_line(info, "providers[0]: provider bedrock:claude has no assay equivalent")
    assert not (tmp_path / ".assay").exists()


@pytest.mark.e2e
def test_assay_eval_runs_a_promptfoo_only_folder(tmp_path: Path) -> None:
    # As a promptfoo user has it: a prompt file, the provider unquoted (a YAML mapping), tests in their own file.
    write(tmp_path / "prompt.txt", "What is the capital of {{country}}?\n")
    promptfoo_folder(tmp_path, prompts="  - file://prompt.txt\n")
    before = files(tmp_path)
    done = assay_cli("eval", "-c", "promptfooconfig.yaml", "--json", "-q", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # one case fails
    report = json.loads(done.stdout)
    assert {c["id"]: c["passed"] for c in report["cases"]} == {
        "tests-1": True,
        "tests-2": False,
        "tests-3": True,
    }
    assert (report["passed"], report["total"]) == (2, 3)
    assert "promptfooconfig.yaml: a promptfoo config, run as `assay init` would set it up" in done.stderr
    # the folder is as it was but for the data directory, which holds what any evaluation writes
    assert files(tmp_path) == before
    assert sorted(p.name for p in (tmp_path / ".assay").iterdir()) == ["cache", "evals", "split.json"]
    assert [p.name for p in (tmp_path / ".assay" / "cache").iterdir()] == ["static"]  # the L1 scan's findings
    table = assay_cli("eval", cwd=tmp_path)  # no assay.yaml: the folder's promptfoo config
    assert "pass rate 2/3" in table.stdout, table.stdout + table.stderr
    assert "contains: 'Lima' not found in output 'I do not know'" in table.stdout
    assert files(tmp_path) == before


CHECKED_TESTS = """\
- vars: {country: France}
  assert: [{type: %s, value: "file://%s"}]
"""


@pytest.mark.usefixtures("no_bwrap")
@pytest.mark.parametrize(
    ("kind", "name", "text", "problem"),
    [
        ("python", "grade.py", None, "grade.py: no such file"),
        (
            "python",
            "grade.py",
            "def get_assert(output, context:\n    return True\n",
            "line 1: invalid Python: ",
        ),
        ("javascript", "grade.js", None, "grade.js: no such file"),
        (
            "javascript",
            "grade.js",
            "module.exports = (output) => { return output.includes(;\n",
            "invalid JavaScript: ",
        ),
    ],
)
def test_a_check_program_that_is_missing_or_does_not_parse_is_refused_at_load(
    tmp_path: Path, kind: str, name: str, text: str | None, problem: str
) -> None:
    if kind == "javascript" and shutil.which("node") is None:
        pytest.skip("javascript assertions need node")
    config = promptfoo_folder(tmp_path, prompts="  - 'Capital of {{country}}?'\n")
    write(tmp_path / "tests.yaml", CHECKED_TESTS % (kind, name))
    if text is not None:
        write(tmp_path / name, text)
    done = assay_cli("eval", "-c", config.name, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()[-1:]
    assert line.startswith("error: ") and "tests.yaml: " in line and "assert[0].value: " in line, line
    assert problem in line and "Traceback" not in done.stderr
    listed = assay_cli("cases", "tests.yaml", cwd=tmp_path)
    assert listed.returncode == 2 and problem in listed.stdout
    write(
        tmp_path / name,
        "def get_assert(output, context):\n    return True\n"
        if kind == "python"
        else "module.exports = (output) => true;\n",
    )
    fixed = assay_cli("eval", "-c", config.name, cwd=tmp_path)
    assert fixed.returncode in (0, 1) and "error:" not in fixed.stderr, fixed.stderr
