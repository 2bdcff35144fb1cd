"""The llm proposer through the real SDKs against the scripted server — above all: nothing of the answer key
ever reaches the model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from assay.config import AssayConfig, LLMSettings
from assay.errors import ConfigError
from assay.extensions import PROPOSER, resolve
from assay.proposers import PROPOSERS, AgentProposer, DevCase, LLMProposer, ProposerView
from assay.proposers.context import build_view
from assay.proposers.redaction import REDACTED
from assay.testing.proposers import check_proposer
from tests.fakes.llm_server import ScriptedLLMServer
from tests.proposers import _planted

PROMPT = "You are a support bot.\nBe helpful.\n"


def proposer(
    server: ScriptedLLMServer, tmp_path: Path, model: str = "openai:fake", **options: Any
) -> LLMProposer:
    url = server.base_url if model.startswith("anthropic:") else server.openai_url
    settings = LLMSettings(
        model=model, base_url=url, max_retries=0, price_in_per_mtok=1.0, price_out_per_mtok=2.0
    )
    return LLMProposer(settings, cache_dir=tmp_path / "cache", use_cache=True, **options)


def user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(block.get("text", "") for block in content)


def cite_first_case(body: dict[str, Any]) -> str:
    """A well-behaved model: cites the first case shown and edits a line of the prompt."""
    label = re.search(r"^\[(\d+)\] case ", user_text(body), re.MULTILINE)
    assert label is not None, "the prompt shows no case"
    return (
        f"DESCRIPTION: ask for politeness\nCITES: [{label.group(1)}]\n\nprompt.md\n"
        "<<<<<<< SEARCH\nBe helpful.\n=======\nBe helpful and polite.\n>>>>>>> REPLACE\n"
    )


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    root = tmp_path / "wt"
    root.mkdir()
    (root / "prompt.md").write_text(PROMPT)
    return root


def planted_view(tmp_path: Path) -> ProposerView:
    redactor = _planted.redactor()
    return build_view(
        artifact={"prompt.md": PROMPT},
        layer=1,
        dev_results=_planted.dev_results(),
        history=_planted.HISTORY,
        last_gate=_planted.LAST_GATE,
        redactor=redactor,
        trace_dir=tmp_path / "traces" / "gen-001",
    )


@pytest.mark.parametrize("model", ["openai:fake", "anthropic:claude-fake"])
async def test_no_check_value_reaches_the_model(
    llm_server: ScriptedLLMServer, tmp_path: Path, worktree: Path, model: str
) -> None:
    llm_server.default = cite_first_case
    view = planted_view(tmp_path)
    llm = proposer(llm_server, tmp_path, model)
    for _ in range(3):
        (worktree / "prompt.md").write_text(PROMPT)
        proposal = await llm.propose(view, worktree, editable=["prompt.md"])
        assert proposal.ok, proposal.error
        assert proposal.citations == ["polite"]  # [1]: the crash comes first
        assert (worktree / "prompt.md").read_text() == "You are a support bot.\nBe helpful and polite.\n"
    assert len(llm_server.requests) == 3
    for request in llm_server.requests:
        raw = json.dumps(request.body, ensure_ascii=False) + json.dumps(request.body)
        assert _planted.leaks(raw) == []
        assert _planted.leaks(request.system + request.user) == []
        # The view was not empty: the failures, their traces and redacted echoes all reached the model.
        assert (
            "output missing an expected element" in request.user and "rubric check 1 failed" in request.user
        )
        # Inline: the outputs and stderr (redacted), not the trace paths a chat model cannot open.
        assert not any(path in request.user for path in view.trace_paths)
        assert "Traceback: [redacted] failed" in request.user and "[1] case polite" in request.user
        assert REDACTED in request.user and "late delivery" in request.user
    for path in view.trace_paths:
        assert _planted.leaks(Path(path).read_text()) == []


async def test_accounting_and_registry(llm_server: ScriptedLLMServer, tmp_path: Path, worktree: Path) -> None:
    assert PROPOSERS.get("llm") is LLMProposer and PROPOSERS.get("agent") is AgentProposer
    with pytest.raises(KeyError, match=r"known: .*agent.*llm"):
        PROPOSERS.get("nope")
    llm_server.default = cite_first_case
    llm_server.usage = (1000, 200)
    proposal = await proposer(llm_server, tmp_path).propose(
        planted_view(tmp_path), worktree, editable=["*.md"]
    )
    assert proposal.ok and proposal.description == "ask for politeness"
    assert (proposal.tokens_in, proposal.tokens_out) == (1000, 200)
    assert proposal.cost_usd == pytest.approx((1000 * 1.0 + 200 * 2.0) / 1e6)
    assert llm_server.requests[0].body["max_tokens"] == 4096


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ("I would rather not change anything.", "the answer has no edit"),
        (
            "DESCRIPTION: x\nprompt.md\n<<<<<<< SEARCH\nBe helpful.\n=======\nHi\n",
            "unterminated SEARCH/REPLACE",
        ),
        (
            "DESCRIPTION: no cite\nprompt.md\n<<<<<<< SEARCH\nBe helpful.\n=======\nHi\n>>>>>>> REPLACE\n",
            "no case cited",
        ),
        (
            "CITES: [9], /no/such/trace.json\nprompt.md\n<<<<<<< SEARCH\nBe helpful.\n=======\nHi\n>>>>>>> REPLACE\n",
            "no case cited",
        ),
        (
            "CITES: [2]\nprompt.md\n<<<<<<< SEARCH\nBe rude.\n=======\nHi\n>>>>>>> REPLACE\n",
            "does not match",
        ),
        ("CITES: refund\nFILE: assay.yaml\n```\nchecks: []\n```\n", "not an editable path"),
        ("CITES: refund\nFILE: ../escape.md\n```\nx\n```\n", "leaves the worktree"),
    ],
)
async def test_bad_answers_are_failed_proposals(
    llm_server: ScriptedLLMServer, tmp_path: Path, worktree: Path, answer: str, error: str
) -> None:
    llm_server.default = answer
    proposal = await proposer(llm_server, tmp_path).propose(
        planted_view(tmp_path), worktree, editable=["prompt.md"]
    )
    assert not proposal.ok and proposal.error is not None and error in proposal.error
    assert "\n" not in proposal.error and proposal.tokens_in > 0
    assert (worktree / "prompt.md").read_text() == PROMPT
    assert sorted(p.name for p in worktree.parent.iterdir() if p.suffix == ".md") == []


async def test_model_failure_is_a_failed_proposal(
    llm_server: ScriptedLLMServer, tmp_path: Path, worktree: Path
) -> None:
    llm_server.fail_next(500)
    proposal = await proposer(llm_server, tmp_path).propose(
        planted_view(tmp_path), worktree, editable=["prompt.md"]
    )
    assert not proposal.ok and proposal.error is not None and proposal.error.startswith("model call failed:")
    assert "HTTP 500" in proposal.error and (worktree / "prompt.md").read_text() == PROMPT


async def test_whole_file_answer_without_failures_needs_no_citation(
    llm_server: ScriptedLLMServer, tmp_path: Path, worktree: Path
) -> None:
    llm_server.add_rule("CITES: none\nFILE: prompt.md\n```markdown\nBe kind.\n```\n", user="FILE: <path")
    view = ProposerView(artifact={"prompt.md": PROMPT}, layer=3, dev_cases=[DevCase("a", input="hi")])
    proposal = await proposer(llm_server, tmp_path, format="whole_file").propose(
        view, worktree, editable=["prompt.md"]
    )
    assert proposal.ok and proposal.citations == [] and proposal.description == "edit prompt.md"
    assert (worktree / "prompt.md").read_text() == "Be kind.\n"
    assert "Layer 3 (architecture)" in llm_server.requests[0].user


def test_bad_format_and_bad_model_are_config_errors(tmp_path: Path) -> None:
    settings = LLMSettings(model="openai:fake", base_url="http://127.0.0.1:9")
    with pytest.raises(ConfigError, match="unknown answer format 'diff'"):
        LLMProposer(settings, format="diff")
    with pytest.raises(ConfigError, match=r"evolve\.proposer\.llm\.model"):
        LLMProposer(LLMSettings(model="nosuchprovider:x"))


def raise_the_threshold(body: dict[str, Any]) -> str:
    """A well-behaved model for the suite's artifact: cites the first case shown, raises THRESHOLD."""
    label = re.search(r"^\[(\d+)\] case ", user_text(body), re.MULTILINE)
    assert label is not None, "the prompt shows no case"
    return (
        f"DESCRIPTION: raise the threshold\nCITES: [{label.group(1)}]\n\nclassify.py\n"
        "<<<<<<< SEARCH\nTHRESHOLD = 5\n=======\nTHRESHOLD = 10\n>>>>>>> REPLACE\n"
    )


@pytest.mark.parametrize("reply", [raise_the_threshold, "I would rather not change anything."])
async def test_the_llm_proposer_passes_the_proposer_suite(
    llm_server: ScriptedLLMServer, tmp_path: Path, reply: Any
) -> None:
    """Built as the loop builds it (``resolve(PROPOSER, "llm", config)``) against the scripted server: with a
    model that edits and one that answers with no edit (a failed proposal, not an exception)."""
    llm_server.default = reply
    llm_server.usage = (100, 20)
    config = AssayConfig.model_validate(
        {
            "artifact": {"kind": "code", "paths": ["classify.py"]},
            "cases": {"files": ["cases.yaml"]},
            "runner": {"type": "command", "command": "python classify.py {input}"},
            "evolve": {
                "proposer": {
                    "type": "llm",
                    "llm": {"model": "openai:fake", "base_url": llm_server.openai_url, "max_retries": 0},
                }
            },
        }
    )
    config.path = tmp_path / "assay.yaml"
    await check_proposer(lambda: resolve(PROPOSER, "llm", config, use_cache=False), tmp_path / "suite")
    assert len(llm_server.requests) == 4  # two layers, each by the proposer and by a fresh one
    assert all("classify.py" in request.user for request in llm_server.requests)
