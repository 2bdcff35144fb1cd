"""The agent proposer with real fake-agent processes: it works on its own copy of the editable files (in the jail
where bubblewrap runs) and its changes come back to the worktree as a diff."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.config import AssayConfig
from assay.errors import ConfigError
from assay.extensions import PROPOSER, resolve
from assay.proposers.agent import VIEW_FILE, AgentProposer
from assay.proposers.base import ProposerView
from assay.proposers.context import build_view
from assay.sandbox import bwrap_status
from assay.testing.proposers import check_proposer
from tests.extras import need_bwrap
from tests.proposers import _planted

# The agent proposer makes a fresh git repository for its copy, and a jail where bubblewrap works.
pytestmark = pytest.mark.e2e

PROMPT = "You are a support bot.\nBe helpful.\n"
FAKE_AGENT = """\
import os, pathlib, re, shutil, sys
view_file = pathlib.Path(sys.argv[1])
assert view_file.parent == pathlib.Path.cwd(), (view_file, pathlib.Path.cwd())
assert os.environ["ASSAY_VIEW_FILE"] == str(view_file)
view = view_file.read_text()
pathlib.Path("seen.md").write_text(view)
prompt = pathlib.Path("prompt.md")
key = os.environ.get("FAKE_AGENT_API_KEY", "none")
prompt.write_text(prompt.read_text().replace("Be helpful.", f"Be helpful and polite. key={key}"))
print("made the prompt polite")
trace = re.search(r"^- (/\\S+[.]json)$", view, re.MULTILINE)
assert trace and pathlib.Path(trace.group(1)).read_text().startswith("{")
print("CITES: " + (trace.group(1) if trace else "none"))
"""


@pytest.fixture(params=["jailed", "unsandboxed"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The behaviour tests run in the jail and without one (``allow_unsandboxed``): the same results."""
    if request.param == "jailed":
        need_bwrap()
        yield "jailed"
        return
    monkeypatch.setenv("ASSAY_BWRAP", "")
    bwrap_status.cache_clear()
    yield "unsandboxed"
    monkeypatch.undo()
    bwrap_status.cache_clear()


@pytest.fixture
def worktree(tmp_path: Path, mode: str) -> Path:
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
        redactor=_planted.redactor(),
        trace_dir=tmp_path / "traces",
    )


def python_agent(tmp_path: Path, source: str) -> tuple[str, Path]:
    """A command running ``source`` as the agent, and its folder (to give the jail read access to)."""
    tools = tmp_path / "tools"
    tools.mkdir(exist_ok=True)
    script = tools / "agent.py"
    script.write_text(source)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", tools


def agent(tmp_path: Path, source: str, **kwargs) -> AgentProposer:
    command, tools = python_agent(tmp_path, source)
    kwargs.setdefault("allow_unsandboxed", True)
    suffix = kwargs.pop("args", "")
    return AgentProposer(command + suffix, timeout=kwargs.pop("timeout", 60), home_ro=[tools], **kwargs)


async def test_agent_edits_its_copy_and_the_change_reaches_the_worktree(
    tmp_path: Path, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_API_KEY", "sk-test")
    view = planted_view(tmp_path)
    proposer = agent(tmp_path, FAKE_AGENT, args=" {view_file}", env_allow=["FAKE_AGENT_API_KEY"])
    proposal = await proposer.propose(view, worktree, editable=["prompt.md"])
    assert proposal.ok, proposal.error
    assert proposal.description == "made the prompt polite"
    assert proposal.citations == [view.trace_paths[0]]  # the copy it cited, mapped back
    assert (
        worktree / "prompt.md"
    ).read_text() == "You are a support bot.\nBe helpful and polite. key=sk-test\n"
    assert not (worktree / VIEW_FILE).exists()
    # A file outside the editable paths comes back too (the loop reverts and flags it): here, what it saw.
    shown = (worktree / "seen.md").read_text()
    assert "# Failing cases" in shown and "Edit the artifact files in place" in shown
    assert str(tmp_path) not in shown.replace(str(tmp_path / "traces"), "")  # trace copies, not the originals
    assert _planted.leaks(shown) == []


async def test_agent_environment_is_an_allow_list(
    tmp_path: Path, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_API_KEY", "sk-test")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:pass@db/prod")
    source = "import os\nopen('prompt.md', 'w').write(repr(sorted(os.environ)))\n"
    proposal = await agent(tmp_path, source).propose(planted_view(tmp_path), worktree, editable=["*.md"])
    assert proposal.ok
    names = eval((worktree / "prompt.md").read_text())
    assert "FAKE_AGENT_API_KEY" not in names and "DATABASE_URL" not in names
    assert "PATH" in names and "ASSAY_VIEW_FILE" in names


@pytest.mark.parametrize(
    ("source", "error"),
    [
        (
            "import sys\nprint('trying')\nsys.stderr.write('boom\\n')\nsys.exit(3)\n",
            "agent failed: exit code 3: boom",
        ),
        ("print('looked around, changed nothing')\n", "the agent changed no editable file"),
        ("open('other.txt', 'w').write('x')\n", "the agent changed no editable file"),
        (
            "import os\nos.remove('prompt.md')\nos.symlink('/etc/passwd', 'prompt.md')\n",
            "the agent left prompt.md as a symlink or special file; only files count",
        ),
    ],
)
async def test_failed_agents_are_failed_proposals(
    tmp_path: Path, worktree: Path, source: str, error: str
) -> None:
    proposal = await agent(tmp_path, source).propose(planted_view(tmp_path), worktree, editable=["prompt.md"])
    assert not proposal.ok and proposal.error == error
    assert not (worktree / VIEW_FILE).exists() and (worktree / "prompt.md").read_text() == PROMPT


async def test_deletions_new_files_and_modes_come_back(tmp_path: Path, worktree: Path) -> None:
    (worktree / "old.md").write_text("old\n")
    source = (
        "import os, pathlib\n"
        "os.remove('old.md')\n"
        "pathlib.Path('tools').mkdir()\n"
        "pathlib.Path('tools/run.md').write_text('#!/bin/sh\\n')\n"
        "os.chmod('tools/run.md', 0o755)\n"
    )
    proposal = await agent(tmp_path, source).propose(planted_view(tmp_path), worktree, editable=["**/*.md"])
    assert proposal.ok, proposal.error
    assert not (worktree / "old.md").exists()
    assert (worktree / "tools" / "run.md").stat().st_mode & 0o111


async def test_the_copy_holds_only_the_editable_files_in_a_fresh_repository(
    tmp_path: Path, worktree: Path
) -> None:
    (worktree / "cases.yaml").write_text("expected: secret-in-cases\n")
    (worktree / "notes.txt").write_text("not editable\n")
    source = (
        "import os, subprocess\n"
        "log = subprocess.run(['git', 'log', '--all', '--name-only', '--format=%s'], capture_output=True,"
        " text=True).stdout\n"
        "open('prompt.md', 'w').write(repr((sorted(os.listdir('.')), log)))\n"
    )
    proposal = await agent(tmp_path, source).propose(planted_view(tmp_path), worktree, editable=["prompt.md"])
    assert proposal.ok, proposal.error
    listed, log = eval((worktree / "prompt.md").read_text())
    assert listed == [".assay-proposal.md", ".git", "prompt.md"]
    assert log.split() == ["the", "artifact", "prompt.md"]


async def test_agent_timeout_and_default_description(tmp_path: Path, worktree: Path) -> None:
    slow = AgentProposer("sleep 30", timeout=0.5, allow_unsandboxed=True)
    proposal = await slow.propose(ProposerView(artifact={}, layer=1), worktree, editable=["prompt.md"])
    assert not proposal.ok and proposal.error == "agent failed: timed out after 0.5s"
    quiet = AgentProposer("printf 'Be brief.\\n' > prompt.md", timeout=10, allow_unsandboxed=True)
    proposal = await quiet.propose(ProposerView(artifact={}, layer=1), worktree, editable=["prompt.md"])
    assert proposal.ok and proposal.description == "agent edit" and proposal.citations == []
    assert (worktree / "prompt.md").read_text() == "Be brief.\n"


def test_without_bubblewrap_the_agent_refuses_unless_allowed(no_bwrap: None) -> None:
    with pytest.raises(ConfigError, match=r"sandbox.*ASSAY_BWRAP.*allow_unsandboxed: true") as caught:
        AgentProposer("true")
    assert caught.value.field == "evolve.proposer.allow_unsandboxed"
    allowed = AgentProposer("true", allow_unsandboxed=True)
    assert allowed.unsandboxed is not None and allowed.jail(Path("/tmp"), {}) is None


@pytest.mark.bwrap
def test_with_bubblewrap_the_agent_is_jailed() -> None:
    proposer = AgentProposer("true")
    assert proposer.unsandboxed is None
    assert AgentProposer("true", allow_unsandboxed=True).unsandboxed is None  # allowed, but not needed
    jail = proposer.jail(Path("/tmp/ws"), {"PATH": "/usr/bin"})
    assert jail is not None and jail.writable == (Path("/tmp/ws/work"),) and jail.network


RAISE_THE_THRESHOLD = """\
import pathlib
source = pathlib.Path("classify.py")
source.write_text(source.read_text().replace("THRESHOLD = 5", "THRESHOLD = 6"))
print("raise the threshold")
"""


async def test_the_agent_proposer_passes_the_proposer_suite(tmp_path: Path, mode: str) -> None:
    """Built as the loop builds it (``resolve(PROPOSER, "agent", config)``), with a fake agent that raises the
    suite's threshold, in the jail and without one."""
    command, tools = python_agent(tmp_path, RAISE_THE_THRESHOLD)
    config = AssayConfig.model_validate(
        {
            "artifact": {"kind": "code", "paths": ["classify.py"]},
            "cases": {"files": ["cases.yaml"]},
            "runner": {"type": "command", "command": "python classify.py {input}"},
            "evolve": {
                "proposer": {
                    "type": "agent",
                    "command": command,
                    "timeout": 60,
                    "home_ro": [str(tools)],
                    "allow_unsandboxed": mode == "unsandboxed",
                }
            },
        }
    )
    config.path = tmp_path / "project" / "assay.yaml"
    made = resolve(PROPOSER, "agent", config)
    assert isinstance(made, AgentProposer) and (made.unsandboxed is None) == (mode == "jailed")
    await check_proposer(lambda: resolve(PROPOSER, "agent", config), tmp_path / "suite")
    (changed,) = (tmp_path / "suite").glob("first-1/classify.py")
    assert "THRESHOLD = 6" in changed.read_text()
