"""The agent proposer with real fake-agent processes editing a real worktree."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from assay.proposers.agent import VIEW_FILE, AgentProposer
from assay.proposers.base import ProposerView
from assay.proposers.context import build_view
from assay.proposers.redaction import Redactor, secrets_for
from tests.proposers import _planted

PROMPT = "You are a support bot.\nBe helpful.\n"
FAKE_AGENT = """\
import os, pathlib, re, shutil, sys
view_file = pathlib.Path(sys.argv[1])
assert view_file.parent == pathlib.Path.cwd(), (view_file, pathlib.Path.cwd())
assert os.environ["ASSAY_VIEW_FILE"] == str(view_file)
view = view_file.read_text()
shutil.copy(view_file, sys.argv[2])
prompt = pathlib.Path("prompt.md")
key = os.environ.get("FAKE_AGENT_API_KEY", "none")
prompt.write_text(prompt.read_text().replace("Be helpful.", f"Be helpful and polite. key={key}"))
print("made the prompt polite")
trace = re.search(r"^- (/\\S+[.]json)$", view, re.MULTILINE)
print("CITES: " + (trace.group(1) if trace else "none"))
"""


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    root = tmp_path / "wt"
    root.mkdir()
    (root / "prompt.md").write_text(PROMPT)
    return root


def planted_view(tmp_path: Path) -> ProposerView:
    return build_view(
        artifact={"prompt.md": PROMPT},
        layer=2,
        dev_results=_planted.dev_results(),
        history=_planted.HISTORY,
        last_gate=_planted.LAST_GATE,
        redactor=Redactor(secrets_for(_planted.dev_cases(), _planted.holdout_cases())),
        trace_dir=tmp_path / "traces",
    )


def python_agent(tmp_path: Path, source: str) -> str:
    script = tmp_path / "agent.py"
    script.write_text(source)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


async def test_agent_edits_the_worktree_from_the_view_file(
    tmp_path: Path, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_API_KEY", "sk-test")
    seen = tmp_path / "seen.md"
    command = python_agent(tmp_path, FAKE_AGENT) + f" {{view_file}} {shlex.quote(str(seen))}"
    view = planted_view(tmp_path)
    agent = AgentProposer(command, timeout=60, env_allow=["FAKE_AGENT_API_KEY"])
    proposal = await agent.propose(view, worktree, editable=["prompt.md"])
    assert proposal.ok, proposal.error
    assert proposal.description == "made the prompt polite"
    assert proposal.citations == [view.trace_paths[0]]
    assert (
        worktree / "prompt.md"
    ).read_text() == "You are a support bot.\nBe helpful and polite. key=sk-test\n"
    assert not (worktree / VIEW_FILE).exists()
    shown = seen.read_text()
    assert "# Failing cases" in shown and "Edit the artifact files in place" in shown
    assert _planted.leaks(shown) == []


async def test_agent_environment_is_scrubbed_without_env_allow(
    tmp_path: Path, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_API_KEY", "sk-test")
    command = python_agent(tmp_path, FAKE_AGENT) + f" {{view_file}} {tmp_path / 'seen.md'}"
    proposal = await AgentProposer(command, timeout=60).propose(
        planted_view(tmp_path), worktree, editable=["*.md"]
    )
    assert proposal.ok and "key=none" in (worktree / "prompt.md").read_text()


@pytest.mark.parametrize(
    ("source", "error"),
    [
        (
            "import sys\nprint('trying')\nsys.stderr.write('boom\\n')\nsys.exit(3)\n",
            "agent failed: exit code 3: boom",
        ),
        ("print('looked around, changed nothing')\n", "the agent changed no editable file"),
        ("open('other.txt', 'w').write('x')\n", "the agent changed no editable file"),
    ],
)
async def test_failed_agents_are_failed_proposals(
    tmp_path: Path, worktree: Path, source: str, error: str
) -> None:
    agent = AgentProposer(python_agent(tmp_path, source), timeout=60)
    proposal = await agent.propose(planted_view(tmp_path), worktree, editable=["prompt.md"])
    assert not proposal.ok and proposal.error == error
    assert not (worktree / VIEW_FILE).exists() and (worktree / "prompt.md").read_text() == PROMPT


async def test_agent_timeout_and_default_description(tmp_path: Path, worktree: Path) -> None:
    slow = AgentProposer("sleep 30", timeout=0.5)
    proposal = await slow.propose(ProposerView(artifact={}, layer=1), worktree, editable=["prompt.md"])
    assert not proposal.ok and proposal.error == "agent failed: timed out after 0.5s"
    assert not (worktree / VIEW_FILE).exists()
    quiet = AgentProposer("printf 'Be brief.\\n' > prompt.md", timeout=10)
    proposal = await quiet.propose(ProposerView(artifact={}, layer=1), worktree, editable=["prompt.md"])
    assert proposal.ok and proposal.description == "agent edit" and proposal.citations == []
    assert (worktree / "prompt.md").read_text() == "Be brief.\n"


async def test_hidden_paths_are_away_while_the_agent_runs(tmp_path: Path, worktree: Path) -> None:
    (worktree / "assay.yaml").write_text("checks: secret\n")
    (worktree / "cases").mkdir()
    (worktree / "cases" / "dev.yaml").write_text("- expected: secret\n")
    source = (
        "import os\n"
        "seen = sorted(os.listdir('.'))\n"
        "open('prompt.md', 'w').write(' '.join(seen))\n"
        "open('assay.yaml', 'w').write('overwritten by the agent')\n"
    )
    agent = AgentProposer(
        python_agent(tmp_path, source), timeout=60, hide=["assay.yaml", "cases/", "/etc", "../x"]
    )
    proposal = await agent.propose(ProposerView(artifact={}, layer=1), worktree, editable=["prompt.md"])
    assert proposal.ok, proposal.error
    assert (worktree / "prompt.md").read_text() == f"{VIEW_FILE} prompt.md"
    assert (worktree / "assay.yaml").read_text() == "checks: secret\n"
    assert (worktree / "cases" / "dev.yaml").read_text() == "- expected: secret\n"
