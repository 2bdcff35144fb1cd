"""``assay init`` in a promptfoo project, then ``assay eval``: the user's own suite runs with no API key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cases._helpers import write
from tests.cli.conftest import assay

# The fast layer runs these without the jail (as on a machine without bubblewrap): the jail is not what they
# test; tests/sandbox and the e2e attack tests prove it.
pytestmark = pytest.mark.usefixtures("no_bwrap")

PROVIDER_PY = """\
import sys

def call_api(prompt, options, context):
    city = context["vars"]["city"]
    return {"output": f"{city.upper()}: sunny, {options['config']['unit']} 21"}
"""
EXEC_PROVIDER = """\
import sys
prompt = sys.argv[1]
city = prompt.split("in ")[-1].rstrip("?")
print(f"The weather in {city} is sunny.")
"""
TESTS = """\
defaultTest:
  assert:
    - type: python
      value: "context['prompt'].startswith('What is the weather in')"
tests:
  - description: Oslo
    vars: {city: Oslo}
    assert:
      - type: icontains
        value: '{{city}}'
      - type: javascript
        value: output.includes(context.vars.city.toUpperCase()) || output.includes(context.vars.city)
  - description: Lima fails
    vars: {city: Lima}
    assert:
      - type: contains
        value: rain
  - description: Rome by the default check
    vars: {city: Rome}
"""


def _eval(root: Path) -> dict[str, Any]:
    init = assay("init", cwd=root)
    assert init.returncode == 0, init.stdout + init.stderr
    proc = assay("eval", "--json", "-q", cwd=root, env={"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""})
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def _verdicts(report: dict[str, Any]) -> dict[str, bool]:
    return {case["id"]: bool(case["passed"]) for case in report["cases"]}


@pytest.mark.skipif(shutil.which("node") is None, reason="javascript assertions need node")
def test_exec_provider_suite_runs_after_init(tmp_path: Path) -> None:
    root = tmp_path / "weather"
    write(root / "provider.py", EXEC_PROVIDER)
    write(
        root / "promptfooconfig.yaml",
        "prompts: ['What is the weather in {{city}}?']\nproviders: ['exec: python3 provider.py']\n" + TESTS,
    )
    report = _eval(root)
    config = yaml.safe_load((root / "assay.yaml").read_text())
    assert config["runner"]["type"] == "python"
    # the inline prompt became a prompt file, the artifact
    assert (root / "prompts" / "prompt-1.txt").read_text().startswith("What is the weather in {{city}}?")
    assert _verdicts(report) == {"oslo": True, "lima-fails": False, "rome-by-the-default-check": True}
    rome = next(c for c in report["cases"] if c["id"] == "rome-by-the-default-check")
    # defaultTest's python check (on context.prompt, the rendered prompt) judges it
    assert [c["type"] for c in rome["checks"] if c["type"] != "runner"] == ["python"] and not rome["unjudged"]


def test_python_provider_suite_runs_after_init(tmp_path: Path) -> None:
    root = tmp_path / "weather"
    write(root / "weather_provider.py", PROVIDER_PY)
    write(root / "prompts" / "ask.txt", "What is the weather in {{city}}?\n")
    write(
        root / "promptfooconfig.yaml",
        """\
prompts: [file://prompts/ask.txt]
providers:
  - id: file://weather_provider.py
    config: {unit: C}
tests:
  - description: Oslo
    vars: {city: Oslo}
    assert:
      - {type: contains, value: OSLO}
      - {type: python, value: "context['prompt'] == 'What is the weather in Oslo?'"}
  - description: Bare
    vars: {city: Rome}
""",
    )
    report = _eval(root)
    verdicts = _verdicts(report)
    assert verdicts["oslo"] is True
    bare = next(c for c in report["cases"] if c["id"] == "bare")
    assert bare.get("unjudged") is True and verdicts["bare"] is False
    # the case without checks ran but is left out of the pass rate
    assert (report["unjudged"], report["total"], report["pass_rate"]) == (1, 1, 1.0)
    table = assay("eval", cwd=root)
    assert "UNJUDGED" in table.stdout and "1 unjudged (no checks)" in table.stdout
    assert "unjudged" in table.stderr and "bare" in table.stderr  # the load warning names it


def test_prompt_files_read_as_promptfoo_reads_them(tmp_path: Path) -> None:
    from assay.cases.promptfoo_bridge import prompt_text

    text = write(tmp_path / "p.txt", "\n  Summarise {{doc}}\n---\nSecond prompt\n")
    chat = write(tmp_path / "p.json", '[{"role": "user", "content": "{{doc}}"}]\n')
    assert prompt_text(text) == "Summarise {{doc}}"
    assert prompt_text(chat) == '[{"role": "user", "content": "{{doc}}"}]\n'


EXEC_FORMS = {
    "unquoted": "  - exec: python answer.py\n",  # YAML reads it as {"exec": "python answer.py"}
    "quoted": "  - 'exec: python answer.py'\n",
    "id": "  - id: 'exec: python answer.py'\n    config: {unit: C}\n",
}


@pytest.mark.parametrize("form", sorted(EXEC_FORMS))
def test_an_exec_provider_in_any_yaml_form_runs_through_the_bridge(tmp_path: Path, form: str) -> None:
    from assay.starters.promptfoo import Bridge, plan_promptfoo

    write(tmp_path / "prompt.txt", "Capital of {{country}}?\n")
    config = write(
        tmp_path / "promptfooconfig.yaml",
        "prompts: [file://prompt.txt]\nproviders:\n"
        + EXEC_FORMS[form]
        + "tests: [{vars: {country: France}}]\n",
    )
    plan = plan_promptfoo(tmp_path, config)
    given = {"unit": "C"} if form == "id" else {}
    assert plan.provider == "exec: python answer.py" and not plan.notes
    assert plan.bridge == Bridge(
        "exec_provider", {"prompt": "prompt.txt", "command": "python answer.py", "config": given}
    )
    assert plan.runner["type"] == "python" and plan.runner["read_only"] == ["answer.py"]


PYTHON_FORMS = {
    "unquoted": ("  - python: provider.py\n", "call_api"),
    "quoted": ("  - 'python:provider.py'\n", "call_api"),
    "file url": ("  - file://provider.py\n", "call_api"),
    "id with a function": ("  - id: file://provider.py:answer\n    config: {unit: C}\n", "answer"),
}


@pytest.mark.parametrize("form", sorted(PYTHON_FORMS))
def test_a_python_provider_in_any_yaml_form_runs_through_the_bridge(tmp_path: Path, form: str) -> None:
    from assay.starters.promptfoo import plan_promptfoo

    providers, function = PYTHON_FORMS[form]
    config = write(tmp_path / "promptfooconfig.yaml", "prompts: ['{{q}}']\nproviders:\n" + providers)
    plan = plan_promptfoo(tmp_path, config)
    assert plan.bridge is not None and plan.bridge.function == "python_provider"
    assert (plan.bridge.arguments["file"], plan.bridge.arguments["function"]) == ("provider.py", function)
    assert plan.runner["read_only"] == ["provider.py"]


def test_the_provider_module_init_writes_is_unchanged(tmp_path: Path) -> None:
    from assay.starters.promptfoo import MODULE, write_promptfoo_starter

    write(
        tmp_path / "promptfooconfig.yaml", "prompts: [file://p.txt]\nproviders:\n  - exec: python answer.py\n"
    )
    write(tmp_path / "p.txt", "{{q}}\n")
    write_promptfoo_starter(tmp_path, "assay.yaml", tmp_path / "promptfooconfig.yaml")
    assert (tmp_path / MODULE).read_text() == (
        '"""Written by `assay init` from the promptfoo config: the runner renders the prompt as promptfoo\n'
        'does and calls its first provider, exec: python answer.py."""\n\n'
        "from assay.cases import promptfoo_bridge as bridge\n\n\n"
        "def run(case, artifact_dir):\n"
        "    return bridge.exec_provider(case, artifact_dir, prompt='p.txt', command='python answer.py', config={})\n"
    )
    runner = yaml.safe_load((tmp_path / "assay.yaml").read_text())["runner"]
    # the provider is the user's code: it reaches its model API with the user's key, as under promptfoo
    assert runner["network"] is True and "*_API_KEY" in runner["env_allow"]
