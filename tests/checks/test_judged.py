"""llm_judge and fact_coverage through the real SDKs against the scripted server."""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from assay.checks import CHECKS, CheckContext, CheckSpecError, build_check
from assay.checks.judged import NO_JUDGE, FactCoverage, LLMJudgeCheck, parse_verdict
from assay.config import JudgeConfig
from assay.llm import ChatModel, make_llm
from assay.model import Case, CheckResult, CheckSpec, Output
from tests.fakes.llm_server import ScriptedLLMServer

CASE = Case(id="c1", input="Tell the customer their parcel is late.")
POLITE = "We are sorry: your parcel will arrive two days late. Thank you for your patience."


def judge_for(server: ScriptedLLMServer, model: str = "openai:gpt-4o-mini", **kw: Any) -> ChatModel:
    url = server.base_url if model.startswith("anthropic:") else server.openai_url
    cache_dir = kw.pop("cache_dir", None)
    config = JudgeConfig(model=model, base_url=url, max_retries=kw.pop("max_retries", 0), **kw)
    return make_llm(config, cache_dir=cache_dir, use_cache=cache_dir is not None)


@pytest.fixture
async def judge(llm_server: ScriptedLLMServer) -> AsyncIterator[ChatModel]:
    model = judge_for(llm_server)
    yield model
    await model.aclose()


async def grade(
    spec: CheckSpec, judge: ChatModel | None, text: str = POLITE, votes: int = 3, **out: Any
) -> CheckResult:
    check = build_check(spec)
    return await check.run(Output(text=text, **out), CheckContext(case=CASE, judge=judge, judge_votes=votes))


def rubric(value: Any = "The reply is polite.", **kw: Any) -> CheckSpec:
    return CheckSpec(type="llm_judge", value=value, **kw)


def facts(value: Any, **kw: Any) -> CheckSpec:
    return CheckSpec(type="fact_coverage", value=value, **kw)


def test_registered_and_judged() -> None:
    assert CHECKS.get("llm_judge") is LLMJudgeCheck and CHECKS.get("fact_coverage") is FactCoverage
    assert LLMJudgeCheck.judged and FactCoverage.judged


@pytest.mark.parametrize(
    "spec",
    [
        rubric(""),
        rubric("   "),
        rubric(None),
        rubric(["a"]),
        facts([]),
        facts(""),
        facts(" | "),
        facts([1]),
        facts(3),
    ],
)
def test_invalid_specs(spec: CheckSpec) -> None:
    with pytest.raises(CheckSpecError):
        build_check(spec)


def test_facts_split_on_bar() -> None:
    check = build_check(facts("Paris | on the Seine |  "))
    assert isinstance(check, FactCoverage) and check.facts == ["Paris", "on the Seine"]


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        ("VERDICT: PASS\nREASON: polite and clear", (True, "polite and clear")),
        ("**Verdict:** fail\n**Reason:** rude", (False, "rude")),
        ("PASS", (True, "")),
        ("Thinking...\nVERDICT: FAIL\nREASON: no apology", (False, "no apology")),
    ],
)
def test_parse_verdict(answer: str, verdict: tuple[bool, str]) -> None:
    parsed = parse_verdict(answer)
    assert parsed is not None and (parsed.passed, parsed.reason) == verdict


def test_parse_verdict_rejects_prose() -> None:
    assert parse_verdict("I think it is fine overall.") is None
    assert parse_verdict("It may PASS, or not") is None


async def test_no_judge_configured() -> None:
    for spec in (rubric(), facts(["x"])):
        result = await grade(spec, None)
        assert not result.passed and result.score == 0 and result.evidence == NO_JUDGE


async def test_majority_pass_fail_pass(llm_server: ScriptedLLMServer, judge: ChatModel) -> None:
    llm_server.usage = (100, 10)
    llm_server.add_rule(
        [
            "VERDICT: PASS\nREASON: apologises",
            "VERDICT: FAIL\nREASON: too curt",
            "VERDICT: PASS\nREASON: apologises",
        ]
    )
    result = await grade(rubric(), judge)
    assert result.passed and result.score == pytest.approx(2 / 3)
    assert result.evidence == "judge PASS (2/3 votes pass): apologises"
    assert len(llm_server.requests) == 3
    assert (result.tokens_in, result.tokens_out) == (300, 30)
    assert result.cost_usd == pytest.approx(3 * (100 * 0.15 + 10 * 0.60) / 1e6)
    body = llm_server.requests[0].body
    assert body["temperature"] == 0
    assert "VERDICT: PASS or VERDICT: FAIL" in llm_server.requests[0].system
    user = llm_server.requests[0].user
    assert "<rubric>\nThe reply is polite.\n</rubric>" in user
    assert f"<input>\n{CASE.input}\n</input>" in user and f"<output>\n{POLITE}\n</output>" in user


async def test_majority_fail(llm_server: ScriptedLLMServer, judge: ChatModel) -> None:
    llm_server.add_rule(
        ["VERDICT: PASS\nREASON: ok", "VERDICT: FAIL\nREASON: rude", "VERDICT: FAIL\nREASON: rude"]
    )
    result = await grade(rubric(), judge)
    assert not result.passed and result.score == pytest.approx(1 / 3)
    assert result.evidence == "judge FAIL (1/3 votes pass): rude"


@pytest.mark.parametrize(
    ("answer", "passed"), [("VERDICT: PASS\nREASON: fine", True), ("VERDICT: FAIL\nREASON: no", False)]
)
async def test_early_stop_when_two_agree(
    llm_server: ScriptedLLMServer, judge: ChatModel, answer: str, passed: bool
) -> None:
    llm_server.default = answer
    result = await grade(rubric(), judge)
    assert result.passed is passed and result.score == (1.0 if passed else 0.0)
    assert len(llm_server.requests) == 2  # the third vote could not change the outcome


async def test_vote_counts(llm_server: ScriptedLLMServer, judge: ChatModel) -> None:
    llm_server.default = "VERDICT: PASS\nREASON: fine"
    assert (await grade(rubric(), judge, votes=1)).passed
    assert len(llm_server.requests) == 1
    llm_server.reset()
    # 5 votes: 3 asked together (2 PASS, 1 FAIL), then one at a time; the 4th decides by passing.
    llm_server.add_rule(
        ["VERDICT: PASS\nREASON: a"] * 2 + ["VERDICT: FAIL\nREASON: b", "VERDICT: PASS\nREASON: a"]
    )
    five = await grade(rubric(), judge, votes=5)
    assert five.passed and five.score == pytest.approx(3 / 4) and len(llm_server.requests) == 4


async def test_even_split_fails(llm_server: ScriptedLLMServer, judge: ChatModel) -> None:
    llm_server.add_rule(["VERDICT: PASS\nREASON: a", "VERDICT: FAIL\nREASON: b"])
    result = await grade(rubric(), judge, votes=2)
    assert not result.passed and result.score == 0.5


async def test_votes_use_distinct_samples_in_the_cache(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.add_rule(
        ["VERDICT: PASS\nREASON: ok", "VERDICT: FAIL\nREASON: no", "VERDICT: PASS\nREASON: ok"]
    )
    first = judge_for(llm_server, cache_dir=tmp_path)
    again = judge_for(llm_server, cache_dir=tmp_path)
    try:
        before = await grade(rubric(), first)
        after = await grade(rubric(), again)
    finally:
        await first.aclose()
        await again.aclose()
    assert len(list(tmp_path.glob("*.json"))) == 3
    assert len(llm_server.requests) == 3  # the re-run was served from the cache
    assert (after.passed, after.score, after.evidence) == (before.passed, before.score, before.evidence)
    assert before.cost_usd > 0 and after.cost_usd == 0


async def test_anthropic_judge(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_rule("VERDICT: PASS\nREASON: courteous", system="grade one output")
    judge = judge_for(llm_server, "anthropic:claude-haiku-4-5")
    try:
        result = await grade(rubric(), judge)
    finally:
        await judge.aclose()
    assert result.passed and result.evidence.endswith("courteous")
    assert {r.api for r in llm_server.requests} == {"anthropic"}


async def test_unparseable_answer_fails_with_evidence(
    llm_server: ScriptedLLMServer, judge: ChatModel
) -> None:
    llm_server.usage = (10, 2)
    llm_server.default = "Looks fine to me!"
    result = await grade(rubric(), judge)
    assert not result.passed and result.score == 0
    assert "no VERDICT line" in result.evidence and "Looks fine to me!" in result.evidence
    assert result.tokens_in > 0  # the calls were paid for, so they are counted


async def test_judge_error_fails_with_evidence(llm_server: ScriptedLLMServer, judge: ChatModel) -> None:
    llm_server.fail_next(500, 500)
    result = await grade(rubric(), judge)
    assert not result.passed and result.evidence.startswith("judge error: openai:gpt-4o-mini: HTTP 500")


async def test_runner_error_is_not_sent_to_the_judge(llm_server: ScriptedLLMServer, judge: ChatModel) -> None:
    result = await grade(rubric(), judge, text="", error="timed out")
    assert not result.passed and "runner error: timed out" in result.evidence
    assert llm_server.requests == []


async def test_negated_judge(llm_server: ScriptedLLMServer, judge: ChatModel) -> None:
    llm_server.default = "VERDICT: FAIL\nREASON: not rude"
    result = await grade(rubric("The reply is rude.", negate=True), judge)
    assert result.passed and result.score == 1.0 and result.type == "not-llm_judge"


def covers(body: dict[str, Any]) -> str:
    """A judge that says PASS when the fact's first word appears in the output section."""
    text = body["messages"][-1]["content"]
    fact = re.search(r"<fact>\n(.*?)\n</fact>", text, re.DOTALL)
    output = re.search(r"<output>\n(.*?)\n</output>", text, re.DOTALL)
    assert fact and output
    word = fact.group(1).split()[0]
    found = word.lower() in output.group(1).lower()
    return f"VERDICT: {'PASS' if found else 'FAIL'}\nREASON: {word} {'found' if found else 'absent'}"


async def test_fact_coverage_scores_and_lists_missing(
    llm_server: ScriptedLLMServer, judge: ChatModel
) -> None:
    llm_server.usage = (40, 4)
    llm_server.default = covers
    spec = facts(["Sorry for the delay", "Two days late", "Refund offered"])
    result = await grade(spec, judge)
    assert not result.passed and result.score == pytest.approx(2 / 3)
    assert result.evidence == "missing 1/3 facts: 'Refund offered'"
    assert len(llm_server.requests) == 3 and (result.tokens_in, result.tokens_out) == (120, 12)
    assert "check whether an output" in llm_server.requests[0].system


async def test_fact_coverage_threshold_and_full_coverage(
    llm_server: ScriptedLLMServer, judge: ChatModel
) -> None:
    llm_server.default = covers
    assert (await grade(facts("Sorry | Refund", threshold=0.5), judge)).passed
    full = await grade(facts("Sorry | patience"), judge)
    assert full.passed and full.score == 1.0 and full.evidence == "all 2 facts covered"


async def test_fact_coverage_bad_answer_fails(llm_server: ScriptedLLMServer, judge: ChatModel) -> None:
    llm_server.add_rule("hmm", user=r"<fact>\nRefund")
    llm_server.default = "VERDICT: PASS\nREASON: there"
    result = await grade(facts(["Sorry", "Refund"]), judge)
    assert not result.passed and result.score == 0
    assert "fact 'Refund'" in result.evidence and "no VERDICT line" in result.evidence


async def test_fact_coverage_judge_error(llm_server: ScriptedLLMServer, judge: ChatModel) -> None:
    llm_server.fail_next(503)
    result = await grade(facts(["Sorry"]), judge)
    assert (
        not result.passed
        and "judge error on fact 'Sorry'" in result.evidence
        and "HTTP 503" in result.evidence
    )


@pytest.mark.live
@pytest.mark.skipif(
    not os.environ.get("ANTHROPIC_API_KEY"), reason="set ANTHROPIC_API_KEY to run live judge tests"
)
async def test_live_anthropic_judge() -> None:
    model = os.environ.get("ASSAY_LIVE_ANTHROPIC_MODEL", "claude-haiku-4-5")
    judge = make_llm(JudgeConfig(model=f"anthropic:{model}", max_tokens=100), cache_dir=None, use_cache=False)
    try:
        polite = await grade(rubric(), judge)
        rude = await grade(rubric(), judge, text="Your parcel is late. Deal with it.")
    finally:
        await judge.aclose()
    assert polite.passed, polite.evidence
    assert not rude.passed, rude.evidence
    assert polite.tokens_in > 0 and polite.cost_usd > 0
