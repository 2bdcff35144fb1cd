"""End-to-end `assay eval` with an llm runner and an LLM judge, against the scripted server on loopback,
through the real openai / anthropic SDKs in a real `assay` subprocess."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.llm_server import Rule, ScriptedLLMServer

CASES = """
- id: late
  input: my order is late
  checks:
    - {type: icontains, value: sorry}
    - {type: llm_judge, value: The reply is polite and apologises}
- id: refund
  input: I want a refund
  checks:
    - {type: contains, value: refund}
- id: rude
  input: this is a rude test
  checks:
    - {type: llm_judge, value: The reply is polite and apologises}
"""


def judge(body: dict) -> str:
    text = json.dumps(body)
    return "VERDICT: FAIL\nREASON: curt" if "Go away" in text else "VERDICT: PASS\nREASON: polite"


@pytest.fixture
def server():
    rules = [
        Rule(judge, system="VERDICT"),
        Rule("We are sorry your order is late.", user="late"),
        Rule("Your refund is on its way.", user="refund"),
        Rule("Go away.", user="rude"),
    ]
    with ScriptedLLMServer(rules=rules) as s:
        yield s


def project(tmp_path: Path, model: str, base_url: str) -> Path:
    (tmp_path / "prompt.md").write_text("You are a support agent. Apologise when something went wrong.\n")
    (tmp_path / "cases.yaml").write_text(CASES)
    (tmp_path / "assay.yaml").write_text(
        "artifact: {kind: prompt, paths: [prompt.md]}\n"
        "cases: {files: [cases.yaml]}\n"
        f"runner: {{type: llm, model: '{model}', base_url: '{base_url}', max_retries: 2}}\n"
        f"judge: {{model: '{model}', base_url: '{base_url}', votes: 3}}\n"
    )
    return tmp_path


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env_command = [sys.executable, "-m", "assay", "eval", "-c", "assay.yaml", "--json", *args]
    return subprocess.run(env_command, cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_llm_runner_and_judge_end_to_end(tmp_path, server, provider):
    base = server.openai_url if provider == "openai" else server.base_url
    cwd = project(tmp_path, f"{provider}:test-model", base)
    result = run(cwd)
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    cases = {c["id"]: c for c in data["cases"]}
    assert cases["late"]["passed"] and cases["refund"]["passed"]
    assert not cases["rude"]["passed"]
    assert "curt" in cases["rude"]["checks"][0]["evidence"]
    assert data["tokens"] > 0
    system_prompts = [r.system for r in server.requests if "VERDICT" not in r.system]
    assert system_prompts and all("support agent" in s for s in system_prompts)

    # A second run is served from the cache: the server sees nothing new.
    before = len(server.requests)
    again = json.loads(run(cwd).stdout)
    assert again["pass_rate"] == data["pass_rate"]
    assert len(server.requests) == before
    # --no-cache asks the model again.
    run(cwd, "--no-cache")
    assert len(server.requests) > before


def test_server_errors_become_failed_cases(tmp_path, server):
    cwd = project(tmp_path, "openai:test-model", server.openai_url)
    (cwd / "cases.yaml").write_text(
        "- {id: one, input: my order is late, checks: [{type: icontains, value: sorry}]}\n"
    )
    server.fail_next(*([500] * 10))
    result = run(cwd, "--no-cache")
    assert result.returncode == 1, result.stderr
    case = json.loads(result.stdout)["cases"][0]
    assert not case["passed"]
    assert "500" in (case["error"] or "")


def test_judged_checks_without_judge_model_is_a_config_error(tmp_path, server):
    cwd = project(tmp_path, "openai:test-model", server.openai_url)
    config = cwd / "assay.yaml"
    config.write_text(
        "\n".join(line for line in config.read_text().splitlines() if not line.startswith("judge"))
    )
    result = run(cwd)
    assert result.returncode == 2
    assert "judge" in result.stderr and "assay.yaml" in result.stderr
    assert "Traceback" not in result.stderr
