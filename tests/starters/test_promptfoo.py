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
