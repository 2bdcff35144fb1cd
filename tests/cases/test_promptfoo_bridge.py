"""The bridge's entry for ``assay eval`` of a promptfoo config: the provider call comes from the environment."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from assay.cases.promptfoo_bridge import PROVIDER_ENV, run
from tests.cases._helpers import write


def _call(monkeypatch: pytest.MonkeyPatch, function: str, **arguments: object) -> None:
    monkeypatch.setenv(PROVIDER_ENV, json.dumps({"function": function, "arguments": arguments}))


def test_run_makes_the_call_the_environment_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write(tmp_path / "answer.py", "import sys\nprint(sys.argv[1].upper())\n")
    write(tmp_path / "p.txt", "capital of {{country}}\n---\nanother prompt\n")
    case = SimpleNamespace(vars={"country": "France"})
    _call(monkeypatch, "exec_provider", prompt="p.txt", command="python3 answer.py", config={})
    answer = run(case, tmp_path)
    assert answer == "CAPITAL OF FRANCE" and answer.prompt == "capital of France"  # type: ignore[attr-defined]


def test_an_inline_prompt_comes_with_the_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The prompt written in the config itself: no file to read, in the project or the jail.
    _call(monkeypatch, "echo_provider", prompt="prompts/prompt-1.txt", inline="  Hi {{name}}!\n")
    assert run(SimpleNamespace(vars={"name": "Ada"}), tmp_path) == "Hi Ada!"
    assert not (tmp_path / "prompts").exists()


@pytest.mark.parametrize("given", ["", "{not json", json.dumps({"function": "nope", "arguments": {}})])
def test_a_bad_call_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, given: str) -> None:
    monkeypatch.setenv(PROVIDER_ENV, given)
    with pytest.raises(
        RuntimeError, match=rf"^\${PROVIDER_ENV} does not name a promptfoo provider call: "
    ) as info:
        run(SimpleNamespace(vars={}), tmp_path)
    assert "\n" not in str(info.value)


def test_a_python_provider_leaves_no_bytecode(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write(
        tmp_path / "prov.py", "def call_api(prompt, options, context):\n    return {'output': prompt[::-1]}\n"
    )
    monkeypatch.setattr("sys.dont_write_bytecode", False)
    _call(monkeypatch, "python_provider", prompt="p", file="prov.py", inline="abc")
    assert run(SimpleNamespace(vars={}), tmp_path) == "cba"
    assert not (tmp_path / "__pycache__").exists()
