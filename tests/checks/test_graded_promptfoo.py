"""promptfoo's model-graded assertions, loaded from a config and judged by assay's judge through the real SDK
against the scripted server: what the judge is shown, and how its answers become verdicts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from assay.cases.loader import load_case_files
from assay.checks import CheckContext, build_check
from assay.config import JudgeConfig
from assay.llm import ChatModel, make_llm
from assay.model import Case, CheckResult, Output
from tests.cases._helpers import write
from tests.fakes.llm_server import ScriptedLLMServer


@pytest.fixture
async def judge(llm_server: ScriptedLLMServer) -> AsyncIterator[ChatModel]:
    model = make_llm(
        JudgeConfig(model="openai:gpt-4o-mini", base_url=llm_server.openai_url, max_retries=0),
        cache_dir=None,
        use_cache=False,
    )
    yield model
    await model.aclose()


def load(tmp_path: Path, assertion: str, variables: str = "{question: How long do refunds take?}") -> Case:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        "prompts: ['{{question}}']\nproviders: [openai:gpt-4o-mini]\n"
        f"tests:\n  - description: Graded\n    vars: {variables}\n    assert:\n      - {assertion}\n",
    )
    (case,) = load_case_files([config]).cases
    return case


async def run(case: Case, judge: ChatModel, text: str = "Refunds take 5 business days.") -> CheckResult:
    (spec,) = case.checks
    return await build_check(spec).run(Output(text=text), CheckContext(case=case, judge=judge, judge_votes=1))


async def test_llm_rubric_renders_vars_into_the_rubric(
    tmp_path: Path, judge: ChatModel, llm_server: ScriptedLLMServer
) -> None:
    case = load(tmp_path, "{type: llm-rubric, value: 'Answers {{question}} in one sentence'}")
    llm_server.add_rule("VERDICT: PASS\nREASON: one sentence", user="How long do refunds take")
    llm_server.default = "VERDICT: FAIL\nREASON: no"
    assert (await run(case, judge)).passed
    assert "Answers How long do refunds take? in one sentence" in llm_server.requests[-1].user


@pytest.mark.parametrize(
    ("kind", "answer", "passed"),
    [
        ("C", "CHOICE: C\nREASON: same facts", True),
        ("A", "CHOICE: A\nREASON: a subset", True),
        ("D", "CHOICE: D\nREASON: contradicts", False),
    ],
)
async def test_factuality_fails_on_disagreement_only(
    tmp_path: Path, judge: ChatModel, llm_server: ScriptedLLMServer, kind: str, answer: str, passed: bool
) -> None:
    case = load(
        tmp_path, "{type: factuality, value: 'Refunds take {{days}} business days'}", "{question: q, days: 5}"
    )
    llm_server.default = answer
    result = await run(case, judge)
    assert result.passed is passed and f"({kind})" in result.evidence
    assert "Refunds take 5 business days" in llm_server.requests[-1].user


async def test_factuality_scores_from_options(
    tmp_path: Path, judge: ChatModel, llm_server: ScriptedLLMServer
) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        """\
prompts: ['{{question}}']
defaultTest:
  options:
    factuality: {subset: 0, superset: 1, agree: 1, disagree: 0, differButFactual: 1}
tests:
  - description: Strict
    vars: {question: q}
    assert: [{type: factuality, value: Refunds take 5 days}]
""",
    )
    (case,) = load_case_files([config]).cases
    llm_server.default = "CHOICE: A\nREASON: subset"
    assert not (await run(case, judge)).passed


@pytest.mark.parametrize(
    ("assertion", "variables", "system", "shown"),
    [
        (
            "{type: model-graded-closedqa, value: Gives a number of days}",
            "{question: q}",
            "meets one criterion",
            "Gives a number of days",
        ),
        (
            "{type: answer-relevance, threshold: 0.7}",
            "{query: How long do refunds take?}",
            "directly",
            "How long do refunds take?",
        ),
        (
            "{type: context-faithfulness, threshold: 0.7}",
            "{query: q, context: Refunds take 5 business days.}",
            "claims",
            "Refunds take 5 business days.",
        ),
        (
            "{type: context-recall, value: Refunds take 5 days, threshold: 0.7}",
            "{query: q, context: Refunds are slow.}",
            "reference",
            "Refunds are slow.",
        ),
        (
            "{type: context-relevance, threshold: 0.7}",
            "{query: refunds, context: Refund policy text.}",
            "bears on",
            "Refund policy text.",
        ),
        (
            "{type: g-eval, value: Concise and correct}",
            "{question: q}",
            "evaluation criteria",
            "Concise and correct",
        ),
        (
            "{type: classifier, value: polite, provider: 'huggingface:text-classification:acme/politeness'}",
            "{question: q}",
            "classifier",
            "acme/politeness",
        ),
        (
            "{type: conversation-relevance}",
            "{question: q, _conversation: [{input: Hi, output: Hello}]}",
            "relevant",
            "assistant: Hello",
        ),
    ],
)
async def test_each_graded_type_on_the_judge(
    tmp_path: Path,
    judge: ChatModel,
    llm_server: ScriptedLLMServer,
    assertion: str,
    variables: str,
    system: str,
    shown: str,
) -> None:
    case = load(tmp_path, assertion, variables)
    llm_server.add_rule("SCORE: 9\nREASON: fine\nVERDICT: PASS", system=system)
    good = await run(case, judge)
    assert good.passed, good.evidence
    assert shown in llm_server.requests[-1].user
    llm_server.reset()
    llm_server.default = "SCORE: 6\nREASON: middling\nVERDICT: FAIL"
    bad = await run(case, judge, "I cannot say.")
    # a rating of 6/10 fails the types whose promptfoo default threshold (or the one given) is above 0.6
    assert not bad.passed or case.checks[0].threshold in (0.0, 0.5), bad.evidence


async def test_graded_types_without_a_judge_fail_saying_so(tmp_path: Path) -> None:
    case = load(tmp_path, "{type: g-eval, value: Concise}")
    (spec,) = case.checks
    result = await build_check(spec).run(Output(text="x"), CheckContext(case=case, judge=None))
    assert not result.passed and "judge" in result.evidence


async def test_context_transform_gives_the_context(
    tmp_path: Path, judge: ChatModel, llm_server: ScriptedLLMServer
) -> None:
    case = load(
        tmp_path,
        "{type: context-faithfulness, contextTransform: 'context.vars.docs.toUpperCase()'}",
        "{query: q, docs: Refunds take 5 business days.}",
    )
    llm_server.default = "SCORE: 8\nREASON: supported"
    llm_server.requests.clear()
    assert (await run(case, judge)).passed
    assert "REFUNDS TAKE 5 BUSINESS DAYS." in llm_server.requests[-1].user


async def test_g_eval_rates_each_criterion_once_and_averages(
    tmp_path: Path, judge: ChatModel, llm_server: ScriptedLLMServer
) -> None:
    case = load(tmp_path, "{type: g-eval, value: [Concise answer, Polite tone]}")
    llm_server.add_rule("SCORE: 10\nREASON: yes", user="Concise answer")
    llm_server.add_rule("SCORE: 2\nREASON: rude", user="Polite tone")
    result = await run(case, judge)
    asked = [r.user for r in llm_server.requests]
    assert len(asked) == 2
    assert ["Concise answer" in u for u in asked] == [True, False]
    assert ["Polite tone" in u for u in asked] == [False, True]
    assert result.score == pytest.approx(0.6)  # (1.0 + 0.2) / 2
    assert "10/10" in result.evidence and "2/10" in result.evidence
