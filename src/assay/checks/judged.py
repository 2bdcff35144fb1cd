"""Checks judged by a model: ``llm_judge`` (a rubric, majority of votes) and ``fact_coverage`` (facts).

The judge answers in a strict two-line format, ``VERDICT: PASS|FAIL`` then ``REASON: ...``, parsed by
``parse_verdict``. A missing judge, a failed call or an unparseable answer is a failed result with evidence.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError
from assay.llm.base import LLM, RUN_INDEX, VOTES_PER_RUN, Completion, LLMError
from assay.model import CheckResult, CheckSpec, Output

NO_JUDGE = "no judge model configured (set judge.model in assay.yaml)"
MAX_OUTPUT_CHARS = 20_000

VERDICT_FORMAT = (
    "Answer in exactly this format and nothing else:\n"
    "VERDICT: PASS or VERDICT: FAIL\n"
    "REASON: <one short sentence>"
)

RUBRIC_SYSTEM = (
    "You grade one output of an AI system against a rubric. Judge only what the rubric asks, strictly; "
    "if the output does not clearly satisfy the rubric, it fails.\n" + VERDICT_FORMAT
)

FACT_SYSTEM = (
    "You check whether an output of an AI system states one given fact. PASS if the output states the fact "
    "or something that clearly implies it, FAIL if it is absent or contradicted.\n" + VERDICT_FORMAT
)

_VERDICT = re.compile(r"^\W*VERDICT\W*(PASS|FAIL)\b", re.IGNORECASE | re.MULTILINE)
_BARE = re.compile(r"^\W*(PASS|FAIL)\b", re.IGNORECASE)
_REASON = re.compile(r"^\W*REASON\W*(.+)$", re.IGNORECASE | re.MULTILINE)


class UnparseableVerdict(ValueError):
    """The judge answered without a verdict line."""


@dataclass
class JudgeVerdict:
    """One parsed judge answer."""

    passed: bool
    reason: str


def _json_verdict(answer: str) -> JudgeVerdict | None:
    """promptfoo's grader answer, ``{"reason": ..., "pass": true, "score": 1}``, anywhere in the text."""
    from assay.checks.structured import json_values_in

    for value in json_values_in(answer):
        if isinstance(value, dict) and isinstance(value.get("pass"), bool):
            return JudgeVerdict(value["pass"], str(value.get("reason", "")))
    return None


def parse_verdict(answer: str) -> JudgeVerdict | None:
    """Parse ``VERDICT: PASS|FAIL`` / ``REASON: ...`` (a bare leading PASS/FAIL is tolerated, and so is a
    JSON object with ``pass`` and ``reason``, the answer a promptfoo rubric prompt asks for); None if the
    answer has no verdict."""
    match = _VERDICT.search(answer) or _BARE.match(answer.strip())
    if match is None:
        return _json_verdict(answer)
    reason = _REASON.search(answer)
    return JudgeVerdict(match.group(1).upper() == "PASS", reason.group(1).strip() if reason else "")


def _section(tag: str, text: str) -> str:
    return f"<{tag}>\n{text}\n</{tag}>"


def _output_text(output: Output) -> str:
    text = output.text
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f"\n[... {len(output.text) - MAX_OUTPUT_CHARS} more characters cut]"
    return text


class _Tally:
    """Tokens and cost summed over judge calls, copied onto the result."""

    def __init__(self) -> None:
        self.tokens_in = 0
        self.tokens_out = 0
        self.cost_usd = 0.0

    def add(self, completion: Completion) -> None:
        self.tokens_in += completion.tokens_in
        self.tokens_out += completion.tokens_out
        self.cost_usd += completion.cost_usd

    def onto(self, result: CheckResult) -> CheckResult:
        result.tokens_in, result.tokens_out, result.cost_usd = self.tokens_in, self.tokens_out, self.cost_usd
        return result


Messages = str | list[dict[str, str]]


async def ask_judge(judge: LLM, system: str, user: Messages, sample: int, tally: _Tally) -> str:
    """One judge call (the user text, or chat messages); its answer. Raises LLMError."""
    sample += RUN_INDEX.get() * VOTES_PER_RUN
    messages = [{"role": "user", "content": user}] if isinstance(user, str) else user
    completion = await judge.complete(messages, system=system, sample=sample)
    tally.add(completion)
    return completion.text


async def _ask(judge: LLM, system: str, user: Messages, sample: int, tally: _Tally) -> JudgeVerdict:
    """One judge call; raises LLMError for a failed call and UnparseableVerdict for a bad answer."""
    text = await ask_judge(judge, system, user, sample, tally)
    verdict = parse_verdict(text)
    if verdict is None:
        raise UnparseableVerdict(f"judge answer has no VERDICT line: {' '.join(text.split())[:200]!r}")
    return verdict


async def majority_vote(
    judge: LLM, system: str, user: Messages, votes_total: int, tally: _Tally
) -> list[JudgeVerdict]:
    """Ask for up to ``votes_total`` verdicts: the first majority-many together, more only while the
    outcome is open (3 votes cost 2 calls when they agree). Raises LLMError or UnparseableVerdict."""
    votes_total = max(1, votes_total)
    majority = votes_total // 2 + 1
    votes: list[JudgeVerdict] = []
    first = await asyncio.gather(
        *(_ask(judge, system, user, i, tally) for i in range(majority)), return_exceptions=True
    )
    for item in first:
        if isinstance(item, BaseException):
            raise item
        votes.append(item)
    while len(votes) < votes_total:
        passes = sum(v.passed for v in votes)
        if passes >= majority or len(votes) - passes > votes_total - majority:
            break
        votes.append(await _ask(judge, system, user, len(votes), tally))
    return votes


def vote_result(check: Check, votes: list[JudgeVerdict], votes_total: int) -> CheckResult:
    """The majority's verdict: score = fraction of PASS votes, evidence = the majority's first reason."""
    majority = max(1, votes_total) // 2 + 1
    passes = sum(v.passed for v in votes)
    passed = passes >= majority
    reason = next((v.reason for v in votes if v.passed == passed and v.reason), "")
    evidence = f"judge {'PASS' if passed else 'FAIL'} ({passes}/{len(votes)} votes pass)"
    if reason:
        evidence += f": {reason}"
    return check.result(passed, passes / len(votes), evidence)


class _JudgedCheck(Check):
    judged: ClassVar[bool] = True
    prose: ClassVar[bool] = True

    def _precheck(self, output: Output, ctx: CheckContext) -> CheckResult | None:
        if ctx.judge is None:
            return self.result(False, evidence=NO_JUDGE)
        if output.error and not output.text.strip():
            return self.result(False, evidence=f"nothing to judge: runner error: {output.error}")
        return None

    def _case_sections(self, output: Output, ctx: CheckContext) -> list[str]:
        parts = [_section("input", ctx.case.prompt_text())]
        if ctx.case.expected is not None:
            parts.append(_section("reference_answer", ctx.case.expected))
        parts.append(_section("output", _output_text(output)))
        return parts


RUBRIC_PROMPT_SYSTEM = (
    "You grade one output of an AI system as the user's message describes. End your answer with the verdict: "
    'either the JSON object the message asks for, with a boolean "pass", or these two lines:\n'
    "VERDICT: PASS or VERDICT: FAIL\nREASON: <one short sentence>"
)


def render_rubric_prompt(template: Any, rubric: str, output: Output, ctx: CheckContext) -> Messages:
    """A promptfoo ``rubricPrompt`` (text, or a list of chat messages) with ``{{output}}``, ``{{rubric}}``
    and the case's vars filled in."""
    from assay.templating import render

    names = {**ctx.case.vars, "output": _output_text(output), "rubric": rubric}
    if isinstance(template, str):
        return render(template, names)
    return [
        {"role": str(m.get("role", "user")), "content": render(str(m.get("content", "")), names)}
        for m in template
    ]


@CHECKS.register("llm_judge")
class LLMJudgeCheck(_JudgedCheck):
    """Asks the judge whether the output meets the rubric (``value``), ``ctx.judge_votes`` times at the
    judge's temperature (0 by default) with distinct ``sample`` indices; the majority wins (see
    :func:`majority_vote`). Score = fraction of PASS votes cast; evidence = the majority's first reason.
    A tie (even vote counts) fails. Option ``rubric_prompt`` (promptfoo's ``rubricPrompt``: text or chat
    messages with ``{{output}}``, ``{{rubric}}`` and the vars) replaces assay's grading prompt."""

    name = "llm_judge"

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.rubric_prompt = spec.options.get("rubric_prompt")
        if self.rubric_prompt is None and (not isinstance(spec.value, str) or not spec.value.strip()):
            raise CheckSpecError("llm_judge needs a rubric: value must be non-empty text")
        self.rubric = spec.value.strip() if isinstance(spec.value, str) else ""
        prompt = self.rubric_prompt
        if prompt is not None and not (
            isinstance(prompt, str)
            or (isinstance(prompt, list) and all(isinstance(m, dict) and "content" in m for m in prompt))
        ):
            raise CheckSpecError("llm_judge: option rubric_prompt must be text or a list of chat messages")

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        early = self._precheck(output, ctx)
        if early is not None:
            return early
        assert ctx.judge is not None
        system: str
        user: Messages
        if self.rubric_prompt is not None:
            system, user = (
                RUBRIC_PROMPT_SYSTEM,
                render_rubric_prompt(self.rubric_prompt, self.rubric, output, ctx),
            )
        else:
            system = RUBRIC_SYSTEM
            user = "\n\n".join([_section("rubric", self.rubric), *self._case_sections(output, ctx)])
        tally = _Tally()
        try:
            votes = await majority_vote(ctx.judge, system, user, ctx.judge_votes, tally)
        except LLMError as exc:
            return tally.onto(self.result(False, evidence=f"judge error: {exc}"))
        except UnparseableVerdict as exc:
            return tally.onto(self.result(False, evidence=str(exc)))
        return tally.onto(vote_result(self, votes, ctx.judge_votes))


def _facts(value: object) -> list[str]:
    if isinstance(value, str):
        items: list[object] = list(value.split(" | "))
    elif isinstance(value, list):
        items = list(value)
    else:
        raise CheckSpecError("fact_coverage needs facts: a list of strings or a string 'fact | fact'")
    if not all(isinstance(f, str) for f in items):
        raise CheckSpecError("fact_coverage facts must be strings")
    facts = [f.strip() for f in items if isinstance(f, str) and f.strip()]
    if not facts:
        raise CheckSpecError("fact_coverage needs at least one non-empty fact")
    return facts


@CHECKS.register("fact_coverage")
class FactCoverage(_JudgedCheck):
    """Asks the judge, one call per fact (concurrently), whether the output states each fact (``value``: a
    list, or a string split on `` | ``). Score = covered fraction; passed = every fact covered unless a
    threshold is set; evidence lists the missing facts.

    One call per fact rather than one call returning a JSON list: each verdict is independent (no anchoring
    on neighbouring facts, no list to misalign), the strict two-line format stays the same as ``llm_judge``,
    an unparseable answer is pinned to one fact, and the cache is per fact, so editing one fact re-asks
    only that one. The price is repeating the output in each call's input tokens.
    """

    name = "fact_coverage"

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.facts = _facts(spec.value)

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        early = self._precheck(output, ctx)
        if early is not None:
            return early
        assert ctx.judge is not None
        judge = ctx.judge
        sections = self._case_sections(output, ctx)
        tally = _Tally()

        def prompt(fact: str) -> str:
            return "\n\n".join([_section("fact", fact), *sections])

        results = await asyncio.gather(
            *(_ask(judge, FACT_SYSTEM, prompt(fact), 0, tally) for fact in self.facts),
            return_exceptions=True,
        )
        for fact, item in zip(self.facts, results, strict=True):
            if isinstance(item, LLMError):
                return tally.onto(self.result(False, evidence=f"judge error on fact {fact!r}: {item}"))
            if isinstance(item, BaseException):
                return tally.onto(self.result(False, evidence=f"fact {fact!r}: {item}"))
        missing = [
            fact
            for fact, item in zip(self.facts, results, strict=True)
            if isinstance(item, JudgeVerdict) and not item.passed
        ]
        covered = len(self.facts) - len(missing)
        score = covered / len(self.facts)
        if missing:
            evidence = f"missing {len(missing)}/{len(self.facts)} facts: " + "; ".join(
                repr(f) for f in missing
            )
        else:
            evidence = f"all {len(self.facts)} facts covered"
        return tally.onto(self.result(not missing, score, evidence))
