"""The evolve loop with an llm runner, an LLM judge and the llm proposer, all talking to the scripted server
on 127.0.0.1 through the real SDK: nothing of the answer key reaches the proposer across generations, bad
answers are recorded as invalid candidates, and the support-prompt example runs end to end."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.aio import run_sync
from assay.cases.split import initial_split
from assay.config import SplitConfig, load_config
from assay.evaluation.session import select_cases
from assay.history.runfiles import RunFiles
from assay.loop.engine import Evolution, RunOutcome
from assay.model import Split
from tests.fakes.llm_server import ScriptedLLMServer

from .conftest import git

EXAMPLE = Path(__file__).parents[2] / "examples" / "support-prompt"

# Who sent a request, told apart by the system prompt each one uses.
PROPOSER_SYSTEM = "You improve an artifact"
JUDGE_SYSTEM = "You grade one output"
PROMPT_SENTINEL = "You are the helpdesk writer of Tiny Tents Ltd."
ANCHOR = "Sign off politely."

CONTAINS = "Quokka-Lantern-7731"
NOT_CONTAINS = "forbidden basilisk phrase"
REGEX = r"ORD-\d{4}-ZETA"
RUBRIC_WORD = "Marzipan Protocol"
EXPECTED = 'velvet "thunder" 99 reference'
HOLDOUT_INPUT = "holdout question about obsidian giraffes"
PLANTED = [CONTAINS, NOT_CONTAINS, REGEX, RUBRIC_WORD, EXPECTED, HOLDOUT_INPUT]
CASE_LABEL = re.compile(r"^\[(\d+)\] case ", re.MULTILINE)


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def spellings(value: str) -> list[str]:
    """Exact, upper, lower, and JSON-escaped once and twice."""
    once = json.dumps(value)[1:-1]
    return [value, value.upper(), value.lower(), once, json.dumps(once)[1:-1]]


def leaks(text: str) -> list[str]:
    """Every spelling of a planted value found in ``text``, ignoring case."""
    lowered = text.lower()
    return [form for value in PLANTED for form in spellings(value) if form.lower() in lowered]


def user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)


def init_repo(root: Path) -> None:
    (root / ".gitignore").write_text(".assay/\n")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "start")


def llm_yaml(url: str) -> str:
    return f"{{model: 'openai:scripted', base_url: '{url}', max_retries: 0, timeout: 20}}"


def write_project(root: Path, url: str, cases: list[dict[str, Any]], evolve: str) -> Path:
    root.mkdir(parents=True)
    (root / "prompt.md").write_text(f"{PROMPT_SENTINEL}\nAnswer the customer's question.\n{ANCHOR}\n")
    (root / "cases.yaml").write_text(yaml.safe_dump({"cases": cases}, sort_keys=False))
    (root / "assay.yaml").write_text(
        "artifact: {kind: prompt, paths: [prompt.md], forbid: [cases.yaml, assay.yaml]}\n"
        "cases: {files: [cases.yaml]}\n"
        f"runner: {{type: llm, {llm_yaml(url)[1:-1]}}}\n"
        f"judge: {{votes: 1, {llm_yaml(url)[1:-1]}}}\n"
        f"evolve:\n  proposer: {{type: llm, llm: {llm_yaml(url)}}}\n{evolve}"
    )
    init_repo(root)
    return root


def evolve(root: Path, generations: int) -> tuple[RunOutcome, RunFiles]:
    outcome = run_sync(Evolution(load_config(root / "assay.yaml"), max_generations=generations).start())
    return outcome, RunFiles(root / ".assay" / "runs" / outcome.run_id)


# -- no leak across generations --------------------------------------------------------------------------


def planted_cases() -> list[dict[str, Any]]:
    ids = [f"q{i:02d}" for i in range(10)]
    holdout = sorted(i for i, split in initial_split(ids, SplitConfig()).items() if split == Split.HOLDOUT)
    cases = []
    for number, case_id in enumerate(ids):
        case: dict[str, Any] = {
            "id": case_id,
            "input": HOLDOUT_INPUT if case_id == holdout[0] else f"customer question {number} about tents",
            "checks": [
                {"type": "contains", "value": CONTAINS},
                {"type": "not_contains", "value": NOT_CONTAINS},
                {"type": "regex", "value": REGEX},
            ],
        }
        if number % 3 == 0:
            case["expected"] = EXPECTED
            case["checks"].append({"type": "llm_judge", "value": f"Names the '{RUBRIC_WORD}' politely."})
        cases.append(case)
    return cases


def runner_reply(body: dict[str, Any]) -> str:
    """Echoes the whole answer key; from "Rule 2" on, even-numbered questions drop the forbidden phrase."""
    system, user = body["messages"][0]["content"], user_text(body)
    number = re.search(r"question (\d+)", user)
    fixed = "Rule 2" in system and number is not None and int(number.group(1)) % 2 == 0
    return (
        f"Hello! Ref {CONTAINS} / {CONTAINS.upper()} / ORD-1234-ZETA, pattern {REGEX}. "
        f"We follow the {RUBRIC_WORD.lower()}; {EXPECTED}. Also: {HOLDOUT_INPUT}. "
        + ("" if fixed else f"Sadly, {NOT_CONTAINS}.")
    )


def judge_reply(body: dict[str, Any]) -> str:
    output = user_text(body).split("<output>", 1)[1]
    if NOT_CONTAINS in output:
        return f'VERDICT: FAIL\nREASON: it never names the {RUBRIC_WORD} and misses "{EXPECTED}"'
    return "VERDICT: PASS\nREASON: polite"


def citing_proposer() -> Callable[[dict[str, Any]], str]:
    """A well-behaved model: adds "Rule N" above the sign-off and cites the first case shown."""
    counter = itertools.count(1)

    def reply(body: dict[str, Any]) -> str:
        labels = CASE_LABEL.findall(user_text(body))
        rule = next(counter)
        return (
            f"DESCRIPTION: add rule {rule} about short replies\nCITES: {f'[{labels[0]}]' if labels else 'none'}\n\n"
            f"prompt.md\n<<<<<<< SEARCH\n{ANCHOR}\n=======\nRule {rule}: keep replies short.\n{ANCHOR}\n"
            ">>>>>>> REPLACE\n"
        )

    return reply


@pytest.mark.e2e
def test_no_check_value_reaches_the_proposer_across_generations(tmp_path, llm_server: ScriptedLLMServer):
    llm_server.add_rule(judge_reply, system=JUDGE_SYSTEM)
    llm_server.add_rule(citing_proposer(), system=PROPOSER_SYSTEM)
    llm_server.default = runner_reply
    root = write_project(tmp_path / "proj", llm_server.openai_url, planted_cases(), "")
    outcome, files = evolve(root, 5)

    # 5, or 4 if the oscillation rule sees the same failing cases three times in a row.
    assert outcome.generations >= 4
    records = files.read_candidates()
    assert [r.decision for r in records][:3] == ["baseline", "discard", "keep"]
    dev_ids = {f"q{n:02d}" for n in range(10)}
    assert all(r.citations and set(r.citations) <= dev_ids for r in records[1:])

    proposer = [r for r in llm_server.requests if r.system.startswith(PROPOSER_SYSTEM)]
    runner = [r for r in llm_server.requests if r.system.startswith(PROMPT_SENTINEL)]
    assert len(proposer) == outcome.generations
    for request in proposer:
        assert CASE_LABEL.search(request.user), "the proposer prompt shows no case"
        assert "[redacted]" in request.user and "output:\n```" in request.user
        assert leaks(json.dumps(request.body)) == []
        assert leaks(request.system + request.user) == []
    written = [p for p in (files.run_dir / "proposer").rglob("*") if p.is_file()]
    assert len(written) >= 5
    for path in written:
        assert leaks(path.read_text()) == [], path

    # Sanity: the answer key really flowed through the run (so the assertions above could fail).
    asked = {r.user for r in runner}
    assert HOLDOUT_INPUT in asked and len(asked) == 10
    assert any("Rule 2: keep replies short." in r.system for r in runner)
    raw = "".join(p.read_text() for p in (files.run_dir / "traces").rglob("traces.jsonl"))
    assert all(value in raw or json.dumps(value)[1:-1] in raw for value in PLANTED)


@pytest.mark.e2e
def test_a_case_id_holding_a_check_value_does_not_leak_through_the_prompt(
    tmp_path, llm_server: ScriptedLLMServer
):
    llm_server.add_rule(citing_proposer(), system=PROPOSER_SYSTEM)
    llm_server.default = "Hello, how can we help?"
    cases = [
        {"id": f"{CONTAINS.lower()}-case", "input": "question 1", "checks": [{"contains": CONTAINS}]},
        {"id": "plain", "input": "question 2", "checks": [{"contains": CONTAINS}]},
    ]
    root = write_project(tmp_path / "ids", llm_server.openai_url, cases, "")
    evolve(root, 1)
    proposer = [r for r in llm_server.requests if r.system.startswith(PROPOSER_SYSTEM)]
    assert len(proposer) == 1 and CASE_LABEL.search(proposer[0].user)
    assert leaks(json.dumps(proposer[0].body)) == []


# -- garbage and unappliable answers ---------------------------------------------------------------------

BAD_ANSWERS = [
    "I think the prompt should be nicer to customers. Good luck!",
    "DESCRIPTION: tweak the greeting\nCITES: {trace}\n\nprompt.md\n<<<<<<< SEARCH\n"
    "This line is not in the prompt.\n=======\nA new line.\n>>>>>>> REPLACE\n",
    "DESCRIPTION: loosen the cases\nCITES: {trace}\n\ncases.yaml\n<<<<<<< SEARCH\n\n=======\n"
    "- id: free\n>>>>>>> REPLACE\n",
]
BAD_ERRORS = ["has no edit", "SEARCH block does not match", "not an editable path"]


@pytest.mark.e2e
def test_garbage_and_unappliable_answers_are_invalid_candidates(tmp_path, llm_server: ScriptedLLMServer):
    answers = iter(BAD_ANSWERS)

    def bad_proposer(body: dict[str, Any]) -> str:
        labels = CASE_LABEL.findall(user_text(body))
        return next(answers).replace("{trace}", f"[{labels[0]}]")

    llm_server.add_rule(bad_proposer, system=PROPOSER_SYSTEM)
    llm_server.default = "Hello, how can we help?"
    cases = [{"id": f"c{i}", "input": f"question {i}", "checks": [{"contains": "refund"}]} for i in range(3)]
    evolve_yaml = "  layers: [1]\n  discards_per_layer: 3\n"
    root = write_project(tmp_path / "bad", llm_server.openai_url, cases, evolve_yaml)
    head = git(root, "rev-parse", "HEAD")

    outcome, files = evolve(root, 10)

    assert outcome.stop_reason == "all layers exhausted"
    assert outcome.generations == 3
    records = files.read_candidates()[1:]
    assert [r.decision for r in records] == ["invalid"] * 3
    for record, error in zip(records, BAD_ERRORS, strict=True):
        assert record.commit is None
        assert record.description.startswith("proposal failed:") and error in record.description
    proposer = [r for r in llm_server.requests if r.system.startswith(PROPOSER_SYSTEM)]
    assert len(proposer) == 3
    # The next proposal is told why the last one failed.
    assert re.search(
        r"# Why the last change was discarded\n- proposal failed: .*has no edit", proposer[1].user
    )
    assert "SEARCH block does not match" in proposer[2].user
    assert git(root, "for-each-ref", f"refs/assay/{outcome.run_id}/") == ""
    assert git(root, "rev-parse", f"assay/{outcome.run_id}") == head
    assert git(root, "rev-parse", "HEAD") == head
    assert git(root, "branch", "--show-current") == "main"
    assert git(root, "status", "--porcelain") == ""
    assert "id: free" not in (root / "cases.yaml").read_text()


# -- the support-prompt example ---------------------------------------------------------------------------


def test_the_example_config_and_cases_load(tmp_path):
    config = load_config(EXAMPLE / "assay.yaml")
    assert config.runner.type == "llm"
    assert config.judge is not None
    assert config.evolve.proposer.type == "llm" and config.evolve.proposer.llm is not None
    assert {config.runner.model, config.judge.model, config.evolve.proposer.llm.model} == {
        "openai:gpt-4o-mini"
    }
    local = config.model_copy(update={"data_dir": str(tmp_path / "data")})
    selection = select_cases(local)
    cases = [case for case, _ in selection.cases]
    assert len(cases) == 12
    assert {split for _, split in selection.cases} == set(Split)
    judged = [c for c in cases if any(spec.type == "llm_judge" for spec in c.checks)]
    assert 3 <= len(judged) < len(cases)
    assert all(c.input and len(c.checks) >= 3 for c in cases)  # its own checks plus the two defaults
    assert not (EXAMPLE / ".assay").exists()


def point_at(config_path: Path, model: str, url: str) -> None:
    """What the README tells a user to do (change the model line), plus a base URL on loopback."""
    data = yaml.safe_load(config_path.read_text())
    for section in (data["runner"], data["judge"], data["evolve"]["proposer"]["llm"]):
        section.update(model=model, base_url=url, max_retries=0, timeout=20)
    config_path.write_text(yaml.safe_dump(data, sort_keys=False))


def example_proposer(body: dict[str, Any]) -> str:
    labels = CASE_LABEL.findall(user_text(body))
    return (
        f"DESCRIPTION: ask for the order number when it is missing\nCITES: [{labels[0]}]\n\nprompt.md\n"
        "<<<<<<< SEARCH\nWrite a friendly, helpful reply.\n=======\nWrite a friendly, helpful reply.\n"
        "If the customer gives no order number, ask for it.\n>>>>>>> REPLACE\n"
    )


@pytest.mark.e2e
@pytest.mark.parametrize("model", ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5", "ollama:llama3.2"])
def test_one_generation_of_the_example_against_the_scripted_server(
    tmp_path, llm_server: ScriptedLLMServer, model: str
):
    llm_server.add_rule("VERDICT: PASS\nREASON: fine", system=JUDGE_SYSTEM)
    llm_server.add_rule(example_proposer, system=PROPOSER_SYSTEM)
    llm_server.default = "Thanks for writing! Please send us your order number.\nThe Northwind Support Team"
    root = tmp_path / "support"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".assay"))
    url = llm_server.base_url if model.startswith("anthropic:") else llm_server.openai_url
    point_at(root / "assay.yaml", model, url)
    init_repo(root)

    outcome, files = evolve(root, 1)

    assert outcome.generations == 1
    record = files.read_candidates()[1]
    assert record.decision in ("keep", "discard") and record.commit
    assert record.citations and record.tokens > 0
    prompt = git(root, "show", f"{record.commit}:prompt.md")
    assert "If the customer gives no order number, ask for it." in prompt
    requests = llm_server.requests
    assert {r.body["model"] for r in requests} == {model.split(":", 1)[1]}
    assert {r.api for r in requests} == {"anthropic" if model.startswith("anthropic:") else "openai"}
    runner = [r for r in requests if r.system.startswith("You are the support assistant of Northwind")]
    inputs = {case.input for case, _ in select_cases(load_config(root / "assay.yaml")).cases}
    assert {r.user for r in runner} == inputs
    assert any(r.system.startswith(JUDGE_SYSTEM) for r in requests)
    assert len([r for r in requests if r.system.startswith(PROPOSER_SYSTEM)]) == 1
    assert git(root, "status", "--porcelain") == ""


# -- retry with context (autocontext's retry prompt) -----------------------------------------------------


@pytest.mark.e2e
def test_a_retry_carries_the_last_score_the_gain_needed_and_its_failures(
    tmp_path, llm_server: ScriptedLLMServer
):
    llm_server.add_rule(citing_proposer(), system=PROPOSER_SYSTEM)
    llm_server.default = "OK, sorry for the wait."
    cases = [
        {"id": f"q{i}", "input": f"question {i}", "checks": [{"type": "contains", "value": "OK"}]}
        for i in range(6)
    ] + [
        {"id": f"hard{i}", "input": f"hard one {i}", "checks": [{"type": "contains", "value": CONTAINS}]}
        for i in range(4)
    ]
    evolve_yaml = (
        "  gate: backpressure\n  gate_options: {min_delta: 0.5, max_retries: 2}\n  target_pass_rate: null\n"
        "  tournament: {enabled: false}\n"
    )
    root = write_project(tmp_path / "proj", llm_server.openai_url, cases, evolve_yaml)
    _, files = evolve(root, 3)
    records = files.read_candidates()
    assert "gate-retry" in records[1].flags  # no gain: the backpressure gate asks for another try
    prompts = [r.user for r in llm_server.requests if r.system.startswith(PROPOSER_SYSTEM)]
    assert "# Try again" not in prompts[0]
    retry = prompts[1].split("# Try again", 1)[1]
    assert "against the best's" in retry and "needed +0.5000 more" in retry
    assert re.search(
        r"^- hard\d: output missing an expected element$", retry, re.M
    )  # its failures, told neutrally
    assert not leaks(prompts[1])
