"""Reflection pays: a program prints which word it did not understand, the fix is to add that word to a list in
the artifact, and the word is nowhere else a proposer could see it (not in the inputs, not in the checks, not in
the artifact). A scripted model that can only read the fix from the output text fixes it in one generation when
the llm proposer's prompt carries the outputs inline, and cannot when it carries trace paths only (the prompt
before reflection: a chat model cannot open a file)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.aio import run_sync
from assay.config import load_config
from assay.history.runfiles import RunFiles
from assay.loop import proposing
from assay.loop.engine import Evolution
from tests.fakes.llm_server import ScriptedLLMServer

from .conftest import git

pytestmark = pytest.mark.e2e

PROPOSER_SYSTEM = "You improve an artifact"
UNKNOWN = re.compile(r"unknown word: '(\w+)'")
CASE_LABEL = re.compile(r"^\[(\d+)\] case ", re.MULTILINE)
TRACE_PATH = re.compile(r"^- (/\S+\.json)$", re.MULTILINE)

# The program under test (read-only, never shown): it reads the words it knows from vocab.txt.
PARSER = """
import sys
SENTENCES = {
    0: "alpha beta zorblax", 1: "beta quindle alpha", 2: "alpha zorblax quindle", 3: "beta alpha zorblax",
    4: "quindle beta", 5: "zorblax alpha beta", 6: "alpha quindle", 7: "beta zorblax",
}
known = {line.strip() for line in open("vocab.txt") if line.strip()}
number = int(sys.argv[1].split()[-1])
words = SENTENCES[number].split()
for word in words:
    if word not in known:
        print(f"read {words.index(word)} of {len(words)} words; unknown word: '{word}'")
        break
else:
    print("every word understood")
"""


def write_project(root: Path, url: str) -> Path:
    root.mkdir(parents=True)
    (root / "vocab.txt").write_text("alpha\nbeta\n")
    (root / "parse.py").write_text(PARSER)
    cases = [
        {"id": f"s{n}", "input": f"sentence {n}", "checks": [{"contains": "every word understood"}]}
        for n in range(8)
    ]
    (root / "cases.yaml").write_text(yaml.safe_dump({"cases": cases}, sort_keys=False))
    llm = f"{{model: 'openai:scripted', base_url: '{url}', max_retries: 0, timeout: 20}}"
    (root / "assay.yaml").write_text(
        "artifact: {kind: config, paths: [vocab.txt], forbid: [parse.py, cases.yaml, assay.yaml]}\n"
        "cases: {files: [cases.yaml]}\n"
        "runner: {type: command, command: 'python parse.py {input}', timeout: 20}\n"
        f"evolve:\n  proposer: {{type: llm, llm: {llm}}}\n  tournament: {{enabled: false}}\n"
    )
    (root / ".gitignore").write_text(".assay/\n__pycache__/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    return root


def user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def reader(body: dict[str, Any]) -> str:
    """A model that fixes only what it can read: the unknown words printed in the outputs it is shown
    (without any, it guesses a word)."""
    text = user_text(body)
    words = sorted(set(UNKNOWN.findall(text))) or ["gamma"]
    labels, traces = CASE_LABEL.findall(text), TRACE_PATH.findall(text)
    cite = f"[{labels[0]}]" if labels else traces[0]
    added = "\n".join(words)
    return (
        f"DESCRIPTION: teach the words {', '.join(words)}\nCITES: {cite}\n\nvocab.txt\n"
        f"<<<<<<< SEARCH\n=======\n{added}\n>>>>>>> REPLACE\n"
    )


def paths_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The prompt as it was before reflection: failing cases by id and trace paths, no output inline."""
    build = proposing.build_view

    def without_outputs(**kwargs: Any) -> Any:
        return dataclasses.replace(build(**kwargs), reflections=[])

    monkeypatch.setattr(proposing, "build_view", without_outputs)


@pytest.mark.parametrize("inline", [True, False], ids=["outputs-inline", "paths-only"])
def test_the_fix_is_read_from_the_outputs_in_one_generation(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, inline: bool
) -> None:
    llm_server.add_rule(reader, system=PROPOSER_SYSTEM)
    root = write_project(tmp_path / "proj", llm_server.openai_url)
    if not inline:
        paths_only(monkeypatch)
    outcome = run_sync(Evolution(load_config(root / "assay.yaml"), max_generations=1).start())
    records = RunFiles(root / ".assay" / "runs" / outcome.run_id).read_candidates()
    baseline, first = records[0], records[1]
    assert baseline.dev_score == 0.0 and first.generation == 1
    (request,) = [r for r in llm_server.requests if r.system.startswith(PROPOSER_SYSTEM)]
    if inline:
        assert "unknown word: 'zorblax'" in request.user and "unknown word: 'quindle'" in request.user
        assert first.decision == "keep" and first.dev_score == 1.0
        assert first.citations and all(re.fullmatch(r"s\d", c) for c in first.citations)
    else:
        assert "unknown word" not in request.user and TRACE_PATH.search(request.user)
        assert first.decision != "keep" and (first.dev_score or 0.0) == 0.0
