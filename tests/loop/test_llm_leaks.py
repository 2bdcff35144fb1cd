"""The llm proposer across 10 generations against the scripted server, with a program under test and a judge that
echo the answer key in altered forms — separators and spacing changed (`ZEBRA 4471`, `ZEBRA_4471`,
`Z E B R A 4471`), split across a line break, base64, hex, URL-encoded, base64 of hex, and fragments from the
middle of a rubric and of a holdout input. Nothing of it reaches a proposer request or a trace copy, judged by
an independent leak detector (tests/leaks.py).

With the protection off — the redactor assay had before (exact, case-folded, escaped and quoted forms only) and
judge reasons shown — the same run leaks in every proposer request.
"""

from __future__ import annotations

import base64
import itertools
import re
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.aio import run_sync
from assay.cases.split import initial_split
from assay.config import SplitConfig, load_config
from assay.history.runfiles import RunFiles
from assay.loop.engine import Evolution
from assay.model import Split
from tests.fakes.llm_server import ScriptedLLMServer
from tests.leaks import leaked
from tests.proposers import _fragments
from tests.proposers._legacy_redaction import LegacyRedactor

from .conftest import git

pytestmark = pytest.mark.e2e

PROPOSER_SYSTEM = "You improve an artifact"
JUDGE_SYSTEM = "You grade one output"
PROMPT_SENTINEL = "You are the helpdesk writer of Tiny Tents Ltd."
ANCHOR = "Sign off politely."
CASE_LABEL = re.compile(r"^\[(\d+)\] case ", re.MULTILINE)

VALUE = "ZEBRA 4471"
EXPECTED = "Your refund reference is KESTREL-2290, valid for thirty days."
RUBRIC = (
    "Grade the reply strictly: it must stay polite like a pangolin guarding its young, "
    "mention the lantern festival exactly once, and never promise a refund date."
)
HOLDOUT_INPUT = "Where is my parcel with the obsidian giraffes and the velvet thunder costume?"
SECRETS = [VALUE, EXPECTED, RUBRIC, HOLDOUT_INPUT, "KESTREL-2290"]


def echoes() -> str:
    """The answer key as a careless (or hostile) program under test prints it."""
    return "\n".join(
        [
            "Hello! Refs: ZEBRA_4471 / Z E B R A 4471 / zebra-4471 / ZEBRA-",
            "4471.",
            f"b64 {base64.b64encode(VALUE.encode()).decode()} hex {VALUE.encode().hex()}",
            f"url {urllib.parse.quote(EXPECTED)}",
            f"nested {base64.b64encode(EXPECTED.encode().hex().encode()).decode()}",
            "We stay Polite_Like_A_Pangolin guarding its young, and mention the Lantern Festival exactly once.",
            "You asked about the obsidian giraffes and the velvet thunder costume.",
            "Your refund reference is kestrel 2290, valid for thirty days.",
        ]
    )


def user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def judge_reply(body: dict[str, Any]) -> str:
    return (
        "VERDICT: FAIL\nREASON: the rubric asks it to stay POLITE LIKE A PANGOLIN GUARDING ITS YOUNG, "
        f"and to mention the lantern-festival exactly once; expected '{EXPECTED.upper()}'; "
        f"code {base64.b64encode(VALUE.encode()).decode()}"
    )


def proposer_reply() -> Callable[[dict[str, Any]], str]:
    counter = itertools.count(1)

    def reply(body: dict[str, Any]) -> str:
        labels = CASE_LABEL.findall(user_text(body))
        rule = next(counter)
        return (
            f"DESCRIPTION: add rule {rule}\nCITES: {f'[{labels[0]}]' if labels else 'none'}\n\n"
            f"prompt.md\n<<<<<<< SEARCH\n{ANCHOR}\n=======\nRule {rule}: be brief.\n{ANCHOR}\n>>>>>>> REPLACE\n"
        )

    return reply


def write_project(root: Path, url: str, show_reasons: bool, value: str = VALUE, rubric: str = RUBRIC) -> Path:
    root.mkdir(parents=True)
    llm = f"{{model: 'openai:scripted', base_url: '{url}', max_retries: 0, timeout: 20}}"
    (root / "prompt.md").write_text(f"{PROMPT_SENTINEL}\nAnswer the customer.\n{ANCHOR}\n")
    ids = [f"q{n:02d}" for n in range(10)]
    holdout = sorted(i for i, split in initial_split(ids, SplitConfig()).items() if split == Split.HOLDOUT)
    cases = []
    for n, case_id in enumerate(ids):
        case: dict[str, Any] = {
            "id": case_id,
            "input": HOLDOUT_INPUT if case_id in holdout else f"customer question {n} about tents",
            "expected": EXPECTED,
            # Weight 0: the contains check cannot decide the case alone, so the judge is asked every time.
            "checks": [
                {"type": "contains", "value": value, "weight": 0},
                {"type": "llm_judge", "value": rubric},
            ],
        }
        cases.append(case)
    (root / "cases.yaml").write_text(yaml.safe_dump({"cases": cases}, sort_keys=False))
    (root / "assay.yaml").write_text(
        "artifact: {kind: prompt, paths: [prompt.md], forbid: [cases.yaml, assay.yaml]}\n"
        "cases: {files: [cases.yaml]}\n"
        f"runner: {{type: llm, {llm[1:-1]}}}\n"
        f"judge: {{votes: 1, {llm[1:-1]}}}\n"
        "evolve:\n"
        f"  proposer: {{type: llm, llm: {llm}, show_judge_reasons: {str(show_reasons).lower()}}}\n"
        "  layers: [1]\n  discards_per_layer: 50\n  plateau: 50\n  stop_on_oscillation: false\n  stop_after_failed: 50\n"
        "  tournament: {enabled: false}\n"
    )
    (root / ".gitignore").write_text(".assay/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    return root


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    "protection", ["on", "on, judge reasons shown", "off"], ids=["on", "reasons-shown", "off"]
)
def test_no_altered_form_reaches_the_proposer_in_ten_generations(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, protection: str
) -> None:
    llm_server.add_rule(judge_reply, system=JUDGE_SYSTEM)
    llm_server.add_rule(proposer_reply(), system=PROPOSER_SYSTEM)
    llm_server.default = lambda body: echoes()
    root = write_project(tmp_path / "proj", llm_server.openai_url, show_reasons=protection != "on")
    if protection == "off":
        monkeypatch.setattr("assay.evaluation.key_redactor.Redactor", LegacyRedactor)
    outcome = run_sync(Evolution(load_config(root / "assay.yaml"), max_generations=10).start())
    files = RunFiles(root / ".assay" / "runs" / outcome.run_id)
    assert outcome.generations == 10

    requests = [r for r in llm_server.requests if r.system.startswith(PROPOSER_SYSTEM)]
    assert len(requests) == 10
    traces = sorted(p for p in (files.run_dir / "proposer").rglob("*.json"))
    assert len(traces) >= 10
    per_request = [leaked(r.system + "\n" + r.user, SECRETS) for r in requests]
    per_trace = [leaked(p.read_text(), SECRETS) for p in traces]
    # The answer key really flowed through the run: the traces assay keeps for itself hold every echo.
    raw = "".join(p.read_text() for p in (files.run_dir / "traces").rglob("traces.jsonl"))
    assert set(leaked(raw, SECRETS)) >= {VALUE, EXPECTED, "KESTREL-2290"}
    if protection == "off":
        assert sum(map(bool, per_request)) == 10  # every request leaks through the former redactor
        assert all(per_trace)
    else:
        assert per_request == [[]] * 10 and per_trace == [[]] * len(traces)
        # The outputs were shown inline, redacted: the prompts were rich enough to leak.
        assert all(CASE_LABEL.search(r.user) and "output:\n```\nHello! Refs:" in r.user for r in requests)
        reasons = ["judge said:" in r.user for r in requests]
        assert all(reasons) if protection == "on, judge reasons shown" else not any(reasons)


def test_no_fragment_of_a_drawn_key_reaches_the_proposer_in_ten_generations(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    """A key drawn for this run (a made-up word, a 3-5 digit number, a rubric of dictionary words): the program
    under test and the judge (reasons shown) echo its fragments alone; none reaches a proposer request or a
    trace copy."""
    key = _fragments.draw()
    echoed = _fragments.echoes(key)
    llm_server.add_rule(lambda body: "VERDICT: FAIL\nREASON: " + "; ".join(echoed), system=JUDGE_SYSTEM)
    llm_server.add_rule(proposer_reply(), system=PROPOSER_SYSTEM)
    llm_server.default = lambda body: "Hello! Refs:\n" + "\n".join(echoed)
    root = write_project(tmp_path / "proj", llm_server.openai_url, True, value=key.value, rubric=key.rubric)
    outcome = run_sync(Evolution(load_config(root / "assay.yaml"), max_generations=10).start())
    files = RunFiles(root / ".assay" / "runs" / outcome.run_id)
    assert outcome.generations == 10
    requests = [r for r in llm_server.requests if r.system.startswith(PROPOSER_SYSTEM)]
    traces = sorted((files.run_dir / "proposer").rglob("*.json"))
    assert len(requests) == 10 and len(traces) >= 10
    assert [_fragments.leaks(r.system + "\n" + r.user, key) for r in requests] == [[]] * 10, key
    assert [_fragments.leaks(p.read_text(), key) for p in traces] == [[]] * len(traces), key
    # The fragments flowed through the run, and the prompts showed the outputs and the judge's reasons.
    raw = "".join(p.read_text() for p in (files.run_dir / "traces").rglob("traces.jsonl"))
    assert set(_fragments.leaks(raw, key)) == {key.rare, "".join(key.pair), key.number}
    assert all("output:\n```\nHello! Refs:" in r.user and "judge said:" in r.user for r in requests)


# -- a program under test that echoes the key into its output and its stderr, and crashes -------------------

NOT_CONTAINS = "forbidden basilisk phrase"
PROGRAM_SECRETS = [VALUE, EXPECTED, HOLDOUT_INPUT, NOT_CONTAINS, "KESTREL-2290"]
HOSTILE_PROGRAM = f"""
import base64, sys, urllib.parse
question = sys.argv[1]
number = int(question.split()[2]) if question.startswith("customer question") else 0
reply = open("reply.txt").read().strip()
print(reply)
print("refs: ZEBRA_4471 / Z E B R A 4471 / zebra-4471 / ZEBRA-")
print("4471.")
print("b64", base64.b64encode({VALUE!r}.encode()).decode(), "hex", {VALUE!r}.encode().hex())
print("padding line " * 400)
print("Your refund reference is kestrel 2290, valid for thirty days.")
log = sys.stderr
log.write("debug: expected=" + urllib.parse.quote({EXPECTED!r}) + "\\n")
log.write("debug: nested " + base64.b64encode({EXPECTED!r}.encode().hex().encode()).decode() + "\\n")
log.write("debug: must avoid FORBIDDEN_BASILISK_PHRASE and the obsidian giraffes and the velvet thunder\\n")
log.write("debug: holdout " + {HOLDOUT_INPUT!r}.upper() + "\\n")
if number % 2:
    raise ValueError("cannot finish: " + base64.b64encode({VALUE!r}.encode()).decode() + " / KESTREL 2290")
"""


def write_program_project(root: Path, url: str) -> Path:
    root.mkdir(parents=True)
    llm = f"{{model: 'openai:scripted', base_url: '{url}', max_retries: 0, timeout: 20}}"
    (root / "reply.txt").write_text(f"{PROMPT_SENTINEL}\n{ANCHOR}\n")
    (root / "bot.py").write_text(HOSTILE_PROGRAM)
    ids = [f"q{n:02d}" for n in range(10)]
    holdout = sorted(i for i, split in initial_split(ids, SplitConfig()).items() if split == Split.HOLDOUT)
    cases = [
        {
            "id": case_id,
            "input": HOLDOUT_INPUT if case_id in holdout else f"customer question {n} about tents",
            "expected": EXPECTED,
            "checks": [
                {"type": "contains", "value": VALUE},
                {"type": "not_contains", "value": NOT_CONTAINS},
                {"type": "equals", "value": EXPECTED},
            ],
        }
        for n, case_id in enumerate(ids)
    ]
    (root / "cases.yaml").write_text(yaml.safe_dump({"cases": cases}, sort_keys=False))
    (root / "assay.yaml").write_text(
        "artifact: {kind: config, paths: [reply.txt], forbid: [bot.py, cases.yaml, assay.yaml]}\n"
        "cases: {files: [cases.yaml]}\n"
        "runner: {type: command, command: 'python bot.py {input}', timeout: 20}\n"
        "evolve:\n"
        f"  proposer: {{type: llm, llm: {llm}}}\n"
        "  layers: [1]\n  discards_per_layer: 50\n  plateau: 50\n  stop_on_oscillation: false\n  stop_after_failed: 50\n"
        "  tournament: {enabled: false}\n"
    )
    (root / ".gitignore").write_text(".assay/\n__pycache__/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    return root


def test_a_crashing_program_echoing_the_key_in_stdout_and_stderr_leaks_nothing_in_ten_generations(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_rule(proposer_reply(), system=PROPOSER_SYSTEM)
    root = write_program_project(tmp_path / "proj", llm_server.openai_url)
    outcome = run_sync(Evolution(load_config(root / "assay.yaml"), max_generations=10).start())
    files = RunFiles(root / ".assay" / "runs" / outcome.run_id)
    assert outcome.generations == 10
    requests = [r for r in llm_server.requests if r.system.startswith(PROPOSER_SYSTEM)]
    assert len(requests) == 10
    assert [leaked(r.system + "\n" + r.user, PROGRAM_SECRETS) for r in requests] == [[]] * 10
    # The prompts carried the outputs (head and tail of a long one) and the stderr of the crashes.
    for request in requests:
        assert "fails (crash)" in request.user and "stderr (the end):" in request.user
        assert "ValueError: cannot finish: [redacted]" in request.user
        assert "the start and the end" in request.user and "padding line" in request.user
    raw = "".join(p.read_text() for p in (files.run_dir / "traces").rglob("traces.jsonl"))
    assert set(leaked(raw, PROGRAM_SECRETS)) >= {VALUE, EXPECTED, HOLDOUT_INPUT}
