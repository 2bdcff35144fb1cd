"""Model-graded checks with promptfoo's meanings, judged by assay's judge model (prompts written for assay).

- ``factuality``: compares the output with a reference answer (``value``) and classifies the relation:
  (A) the output holds part of the reference and agrees with it, (B) all of it and more, agreeing, (C) the
  same facts, (D) they disagree, (E) they differ in ways that do not matter for the facts. It fails on (D)
  only, unless option ``scores`` (promptfoo's ``options.factuality``: ``subset``, ``superset``, ``agree``,
  ``disagree``, ``differButFactual``) gives each category a score: then it passes when its score is above 0.
  The category most votes chose counts.
- ``closed_qa`` (promptfoo's ``model-graded-closedqa``): does the output meet the criterion (``value``) for
  the question asked? Majority of votes, like ``llm_judge``.
- ``g_eval``: a 0–10 rating against criteria (``value``) after reasoning through evaluation steps; score =
  rating / 10; passes at the threshold (0.7).
- ``answer_relevance``: how well the output answers the query (``vars.query``, else the input): score 0–1.
- ``context_faithfulness``: the share of the output's claims the context supports (``vars.context``, or
  option ``context_transform``: JavaScript over ``output`` and ``context`` that returns it), for
  ``vars.query``.
- ``context_recall``: the share of the reference facts (``value``) the context contains.
- ``context_relevance``: the share of the context that bears on the query.
- ``conversation_relevance``: is the output a relevant reply in the conversation so far (``vars._conversation``:
  a list of ``{input, output}`` turns, else the input)? Score = share of PASS votes.
- ``classifier``: does the output belong to the class ``value`` (the label a classifier named in option
  ``classifier`` would give, e.g. a Hugging Face model id)? Score = share of PASS votes; without a value,
  whether the output clearly belongs to one class.

Scored checks pass at the check's ``threshold`` (checks loaded from promptfoo carry promptfoo's default);
without one, at 0.5. A missing judge, a failed call or an unparseable answer is a failed result.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from assay.checks.base import CHECKS, CheckContext, CheckSpecError
from assay.checks.judged import (
    VERDICT_FORMAT,
    Messages,
    UnparseableVerdict,
    _JudgedCheck,
    _output_text,
    _section,
    _Tally,
    ask_judge,
    majority_vote,
    vote_result,
)
from assay.checks.node import JsCall, NodeError, call_js
from assay.checks.text import clip
from assay.checks.transforms import output_value
from assay.llm.base import LLMError
from assay.model import CheckResult, CheckSpec, Output

SCORE_FORMAT = "End your answer with exactly these two lines:\nSCORE: <a whole number from 0 to 10>\nREASON: <one short sentence>"
_SCORE = re.compile(r"^\W*SCORE\W*(\d+(?:\.\d+)?)", re.IGNORECASE | re.MULTILINE)
_CHOICE = re.compile(r"^\W*CHOICE\W*([A-E])\b", re.IGNORECASE | re.MULTILINE)
_REASON = re.compile(r"^\W*REASON\W*(.+)$", re.IGNORECASE | re.MULTILINE)
FACT_CATEGORIES = {"A": "subset", "B": "superset", "C": "agree", "D": "disagree", "E": "differButFactual"}
DEFAULT_FACT_SCORES = {"subset": 1.0, "superset": 1.0, "agree": 1.0, "disagree": 0.0, "differButFactual": 1.0}

FACTUALITY_SYSTEM = (
    "You compare the facts in an AI system's output with a reference answer to the same question. Ignore "
    "style, wording and length. Choose the one letter that fits best:\n"
    "A: the output states only some of the reference's facts, and nothing that contradicts it;\n"
    "B: the output states all of the reference's facts and more, and nothing that contradicts it;\n"
    "C: the output states the same facts as the reference;\n"
    "D: the output contradicts the reference on some fact;\n"
    "E: they differ, but only in ways that do not change the facts (rounding, units, emphasis).\n"
    "End your answer with exactly these two lines:\nCHOICE: <A, B, C, D or E>\nREASON: <one short sentence>"
)
CLOSED_QA_SYSTEM = (
    "You check whether an answer given by an AI system meets one criterion, for the question it was asked. "
    "Judge the criterion only, strictly.\n" + VERDICT_FORMAT
)
G_EVAL_SYSTEM = (
    "You rate an output of an AI system against evaluation criteria. First list the few steps an expert "
    "would take to judge these criteria, then apply them to the output, then rate how fully it meets the "
    "criteria, from 0 (not at all) to 10 (completely).\n" + SCORE_FORMAT
)
ANSWER_RELEVANCE_SYSTEM = (
    "You rate how directly an AI system's output answers the user's query: 10 when every part of it "
    "addresses the query, 0 when it is off topic or evasive. Correctness is not judged here.\n" + SCORE_FORMAT
)
FAITHFULNESS_SYSTEM = (
    "You check an AI system's output against the context it was given. List the output's factual claims, "
    "then count those the context supports. Rate the supported share, from 0 (none) to 10 (all).\n"
    + SCORE_FORMAT
)
RECALL_SYSTEM = (
    "You check whether a context holds the facts of a reference answer. List the reference's facts, then "
    "count those the context states or clearly implies. Rate that share, from 0 (none) to 10 (all).\n"
    + SCORE_FORMAT
)
CONTEXT_RELEVANCE_SYSTEM = (
    "You check how much of a context bears on a query. Split the context into its sentences or "
    "statements and count those useful for answering the query. Rate that share, from 0 (none) to 10 "
    "(all).\n" + SCORE_FORMAT
)
CONVERSATION_SYSTEM = (
    "You judge whether an AI assistant's latest reply is relevant to the conversation so far: it follows "
    "from what the user said and stays on topic.\n" + VERDICT_FORMAT
)
CLASSIFIER_SYSTEM = (
    "You act as a text classifier. Decide whether the text belongs to the given class, as a classifier "
    "trained for this label would.\n" + VERDICT_FORMAT
)


def parse_score(answer: str) -> tuple[float, str] | None:
    """``SCORE: 7`` / ``REASON: ...`` → (0.7, reason); None without a score line."""
    match = _SCORE.search(answer)
    if match is None:
        return None
    reason = _REASON.search(answer)
    return max(0.0, min(10.0, float(match.group(1)))) / 10.0, reason.group(1).strip() if reason else ""


def _var_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class _GradedCheck(_JudgedCheck):
    """Shared: the judge's prompt is built by ``sections``; ``system`` says how to answer."""

    system: ClassVar[str]
    needs_value: ClassVar[bool] = True

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        if self.needs_value and not self.criteria(spec.value):
            raise CheckSpecError(f"{spec.type}: value must be non-empty text")
        transform = spec.options.get("context_transform")
        if transform is not None and (not isinstance(transform, str) or not transform.strip()):
            raise CheckSpecError(f"{spec.type}: option context_transform must be JavaScript code")
        self.context_transform = transform

    @staticmethod
    def criteria(value: Any) -> list[str]:
        """The value as one or more non-empty texts (g_eval takes a list of criteria)."""
        items = value if isinstance(value, list) else [value]
        return [v for v in items if isinstance(v, str) and v.strip()] if len(items) else []

    async def sections(self, output: Output, ctx: CheckContext) -> list[str]:
        raise NotImplementedError

    def query(self, ctx: CheckContext) -> str:
        query = ctx.case.vars.get("query")
        return _var_text(query) if query is not None else ctx.case.prompt_text()

    async def context(self, output: Output, ctx: CheckContext) -> str:
        if self.context_transform is not None:
            args = [output_value(output), {"vars": ctx.case.vars, "prompt": ctx.case.prompt_text()}]
            try:
                value = await call_js(JsCall(args=args, code=self.context_transform), cwd=ctx.project_dir)
            except NodeError as exc:
                raise CheckSpecError(f"context_transform: {exc}") from None
            return _var_text(value)
        context = ctx.case.vars.get("context")
        if context is None:
            raise CheckSpecError(f"{self.name}: the case has no `context` var (or option context_transform)")
        return _var_text(context)

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        return await self.verdict_on(output, ctx, self.sections)

    async def verdict_on(
        self,
        output: Output,
        ctx: CheckContext,
        sections: Callable[[Output, CheckContext], Awaitable[list[str]]],
    ) -> CheckResult:
        """The judge's verdict on the prompt ``sections`` builds (a pre-check may decide without it)."""
        early = self._precheck(output, ctx)
        if early is not None:
            return early
        assert ctx.judge is not None
        tally = _Tally()
        try:
            user = "\n\n".join(await sections(output, ctx))
            return tally.onto(await self.grade(user, ctx, tally))
        except CheckSpecError as exc:
            return tally.onto(self.result(False, evidence=str(exc)))
        except LLMError as exc:
            return tally.onto(self.result(False, evidence=f"judge error: {exc}"))
        except UnparseableVerdict as exc:
            return tally.onto(self.result(False, evidence=str(exc)))

    async def grade(self, user: Messages, ctx: CheckContext, tally: _Tally) -> CheckResult:
        """By default a majority of PASS/FAIL votes."""
        assert ctx.judge is not None
        votes = await majority_vote(ctx.judge, self.system, user, ctx.judge_votes, tally)
        return vote_result(self, votes, ctx.judge_votes)


class _ScoredCheck(_GradedCheck):
    """One 0–10 rating from the judge; passes at 0.5 unless the check has a threshold."""

    async def grade(self, user: Messages, ctx: CheckContext, tally: _Tally) -> CheckResult:
        assert ctx.judge is not None
        answer = await ask_judge(ctx.judge, self.system, user, 0, tally)
        parsed = parse_score(answer)
        if parsed is None:
            raise UnparseableVerdict(f"judge answer has no SCORE line: {' '.join(answer.split())[:200]!r}")
        score, reason = parsed
        return self.result(
            score >= 0.5, score, clip(f"judge score {score * 10:g}/10" + (f": {reason}" if reason else ""))
        )


@CHECKS.register("factuality")
class FactualityCheck(_GradedCheck):
    """The output agrees with the reference answer in ``value`` (see the module docstring)."""

    name = "factuality"
    system = FACTUALITY_SYSTEM

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        scores = spec.options.get("scores")
        self.custom = scores is not None
        self.scores = dict(DEFAULT_FACT_SCORES)
        if scores is not None:
            if not isinstance(scores, dict) or not all(
                k in DEFAULT_FACT_SCORES and isinstance(v, int | float) and not isinstance(v, bool)
                for k, v in scores.items()
            ):
                raise CheckSpecError(
                    f"factuality: option scores maps {', '.join(DEFAULT_FACT_SCORES)} to numbers"
                )
            self.scores.update({k: float(v) for k, v in scores.items()})

    async def sections(self, output: Output, ctx: CheckContext) -> list[str]:
        return [
            _section("question", ctx.case.prompt_text()),
            _section("reference_answer", str(self.spec.value)),
            _section("output", _output_text(output)),
        ]

    async def grade(self, user: Messages, ctx: CheckContext, tally: _Tally) -> CheckResult:
        assert ctx.judge is not None
        choices: list[tuple[str, str]] = []
        for sample in range(max(1, ctx.judge_votes)):
            answer = await ask_judge(ctx.judge, self.system, user, sample, tally)
            match = _CHOICE.search(answer)
            if match is None:
                raise UnparseableVerdict(
                    f"judge answer has no CHOICE line: {' '.join(answer.split())[:200]!r}"
                )
            found = _REASON.search(answer)
            choices.append((match.group(1).upper(), found.group(1).strip() if found else ""))
            counts = Counter(c for c, _ in choices)
            if counts.most_common(1)[0][1] > max(1, ctx.judge_votes) // 2:
                break
        letter = Counter(c for c, _ in choices).most_common(1)[0][0]
        category = FACT_CATEGORIES[letter]
        score = self.scores[category]
        passed = score > 0 if self.custom else category != "disagree"
        reason = next(r for c, r in choices if c == letter)
        return self.result(
            passed,
            max(0.0, min(1.0, score)),
            clip(f"{category} ({letter})" + (f": {reason}" if reason else "")),
        )


@CHECKS.register("closed_qa")
class ClosedQaCheck(_GradedCheck):
    """The output meets the criterion in ``value`` for the question asked."""

    name = "closed_qa"
    system = CLOSED_QA_SYSTEM

    async def sections(self, output: Output, ctx: CheckContext) -> list[str]:
        return [
            _section("question", ctx.case.prompt_text()),
            _section("answer", _output_text(output)),
            _section("criterion", str(self.spec.value)),
        ]


@CHECKS.register("g_eval")
class GEvalCheck(_ScoredCheck):
    """A 0–10 rating against the criteria in ``value`` (a text, or a list: rated one by one, averaged)."""

    name = "g_eval"
    system = G_EVAL_SYSTEM

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        criteria = self.criteria(self.spec.value)
        results = [
            await self.verdict_on(output, ctx, functools.partial(self.sections_for, criterion))
            for criterion in criteria
        ]
        if len(results) == 1:
            return results[0]
        score = sum(r.score for r in results) / len(results)
        result = self.result(score >= 0.5, score, clip("; ".join(r.evidence for r in results)))
        result.tokens_in = sum(r.tokens_in for r in results)
        result.tokens_out = sum(r.tokens_out for r in results)
        result.cost_usd = sum(r.cost_usd for r in results)
        return result

    async def sections(self, output: Output, ctx: CheckContext) -> list[str]:
        return await self.sections_for(self.criteria(self.spec.value)[0], output, ctx)

    async def sections_for(self, criterion: str, output: Output, ctx: CheckContext) -> list[str]:
        """The prompt for one criterion (passed in: a check object may judge several cases at once)."""
        return [
            _section("criteria", criterion),
            _section("input", ctx.case.prompt_text()),
            _section("output", _output_text(output)),
        ]


@CHECKS.register("answer_relevance")
class AnswerRelevanceCheck(_ScoredCheck):
    """How directly the output answers the query."""

    name = "answer_relevance"
    system = ANSWER_RELEVANCE_SYSTEM
    needs_value = False

    async def sections(self, output: Output, ctx: CheckContext) -> list[str]:
        return [_section("query", self.query(ctx)), _section("output", _output_text(output))]


@CHECKS.register("context_faithfulness")
class ContextFaithfulnessCheck(_ScoredCheck):
    """The share of the output's claims the context supports."""

    name = "context_faithfulness"
    system = FAITHFULNESS_SYSTEM
    needs_value = False

    async def sections(self, output: Output, ctx: CheckContext) -> list[str]:
        return [
            _section("query", self.query(ctx)),
            _section("context", await self.context(output, ctx)),
            _section("output", _output_text(output)),
        ]


@CHECKS.register("context_recall")
class ContextRecallCheck(_ScoredCheck):
    """The share of the reference facts (``value``) the context holds."""

    name = "context_recall"
    system = RECALL_SYSTEM

    async def sections(self, output: Output, ctx: CheckContext) -> list[str]:
        return [
            _section("context", await self.context(output, ctx)),
            _section("reference", str(self.spec.value)),
        ]


@CHECKS.register("context_relevance")
class ContextRelevanceCheck(_ScoredCheck):
    """The share of the context that bears on the query."""

    name = "context_relevance"
    system = CONTEXT_RELEVANCE_SYSTEM
    needs_value = False

    async def sections(self, output: Output, ctx: CheckContext) -> list[str]:
        return [_section("query", self.query(ctx)), _section("context", await self.context(output, ctx))]


def _conversation(ctx: CheckContext) -> str:
    turns = ctx.case.vars.get("_conversation")
    if not isinstance(turns, list) or not turns:
        return f"user: {ctx.case.prompt_text()}"
    lines = []
    for turn in turns:
        if isinstance(turn, dict):
            lines.append(f"user: {_var_text(turn.get('input', ''))}")
            lines.append(f"assistant: {_var_text(turn.get('output', ''))}")
    lines.append(f"user: {ctx.case.prompt_text()}")
    return "\n".join(lines)


@CHECKS.register("conversation_relevance")
class ConversationRelevanceCheck(_GradedCheck):
    """The output is a relevant reply in the conversation so far."""

    name = "conversation_relevance"
    system = CONVERSATION_SYSTEM
    needs_value = False

    async def sections(self, output: Output, ctx: CheckContext) -> list[str]:
        return [_section("conversation", _conversation(ctx)), _section("latest_reply", _output_text(output))]


@CHECKS.register("classifier")
class ClassifierCheck(_GradedCheck):
    """The output belongs to the class ``value`` (see the module docstring)."""

    name = "classifier"
    system = CLASSIFIER_SYSTEM
    needs_value = False

    async def sections(self, output: Output, ctx: CheckContext) -> list[str]:
        label = self.spec.value
        model = self.spec.options.get("classifier")
        parts = [_section("text", _output_text(output))]
        if isinstance(label, str) and label.strip():
            parts.insert(0, _section("class", label.strip()))
        else:
            parts.insert(0, _section("class", "any one class, clearly"))
        if isinstance(model, str) and model:
            parts.insert(0, _section("classifier", model))
        return parts
