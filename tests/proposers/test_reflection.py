"""Reflection inline: which cases the llm proposer is shown, what it sees of each, and the token budget."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from assay.config import LLMSettings
from assay.model import Case, CaseResult, CheckResult, CheckSpec, Output, Split
from assay.proposers import HistoryEntry, LLMProposer
from assay.proposers.budget import estimate_tokens
from assay.proposers.context import build_view
from assay.proposers.failures import failure_kind
from assay.proposers.prompt import SYSTEM, render_prompt
from assay.proposers.redaction import REDACTED, Redactor, secrets_for
from assay.proposers.reflection import MARGIN, case_chars, choose, reflect
from tests.fakes.llm_server import ScriptedLLMServer
from tests.leaks import leaked
from tests.proposers.test_redaction_properties import attacks

VALUE = "ZEBRA 4471"
RUBRIC = "The reply must stay polite like a pangolin guarding its young in every sentence."


def case(case_id: str, *checks: CheckSpec) -> Case:
    specs = list(checks) or [CheckSpec(type="contains", value=VALUE)]
    return Case(id=case_id, input=f"question {case_id}", checks=specs)


def result(case_id: str, *failed: str, output: Output | None = None, passed: bool = False) -> CaseResult:
    checks = [CheckResult(type=kind, passed=False, score=0.0) for kind in failed]
    if passed:
        checks = [CheckResult(type="contains", passed=True, score=1.0)]
    return CaseResult(
        id=case_id,
        split=Split.DEV,
        passed=passed,
        score=1.0 if passed else 0.0,
        output=output or Output(text=f"answer to {case_id}"),
        checks=checks,
    )


def test_failure_kinds() -> None:
    assert failure_kind(result("a", "runner", output=Output(error="exit code 1", exit_code=1))) == "crash"
    assert failure_kind(result("a", "contains", output=Output(exit_code=2))) == "crash"
    assert failure_kind(result("a", "runner", output=Output(error="timeout", timed_out=True))) == "timeout"
    assert failure_kind(result("a", "contains", "json_schema")) == "format"
    assert failure_kind(result("a", "not-json_valid")) == "format"
    assert failure_kind(result("a", "regex")) == "content"
    assert failure_kind(result("a", "contains", "llm_judge")) == "content"
    assert failure_kind(result("a", "llm_judge", "fact_coverage")) == "judged"


def test_diverse_kinds_first_regressions_first_then_contrast() -> None:
    crash = Output(error="boom", exit_code=1)
    dev = [
        (case("c1"), result("c1", "contains")),
        (case("c2"), result("c2", "contains")),
        (case("c3"), result("c3", "contains")),
        (case("x1"), result("x1", "runner", output=crash)),
        (case("j1"), result("j1", "llm_judge")),
        (case("f1"), result("f1", "xml")),
        (case("f2"), result("f2", "json_valid")),
        (case("p1"), result("p1", passed=True)),
        (case("p2"), result("p2", passed=True, output=Output(text="  "))),  # nothing to contrast with
        (case("p3"), result("p3", passed=True)),
    ]
    chosen, left_out = choose(dev, {"c3", "f2"})
    assert [c.id for c, _ in chosen] == ["x1", "f2", "c3", "j1", "p1", "p3", "f1", "c1", "c2"]
    assert left_out == 0
    chosen, left_out = choose(dev, {"c3", "f2"}, limit=5)
    assert [c.id for c, _ in chosen] == ["x1", "f2", "c3", "j1", "p1", "p3", "f1"] and left_out == 2


def test_view_numbers_failing_cases_first_and_marks_regressions(tmp_path: Path) -> None:
    dev = [
        (case("ok"), result("ok", passed=True)),
        (case("bad"), result("bad", "contains", output=Output(text=f"I said {VALUE}"))),
        (case("worse"), result("worse", "runner", output=Output(error="exit code 3", exit_code=3))),
    ]
    view = build_view(
        artifact={},
        layer=1,
        dev_results=dev,
        history=[],
        last_gate=[],
        redactor=Redactor([VALUE]),
        trace_dir=tmp_path,
        regressed={"bad"},
    )
    assert [(r.label, r.id, r.kind, r.regressed) for r in view.reflections] == [
        (1, "worse", "crash", False),
        (2, "bad", "content", True),
        (3, "ok", "passed", False),
    ]
    assert view.reflections[1].output_head == f"I said {REDACTED}"
    assert view.reflections[1].verdicts == [("contains", "output missing an expected element")]
    assert view.reflections[2].verdicts == [("contains", "passed")]


def test_a_huge_output_is_cut_head_and_tail_and_redacted_across_the_cuts() -> None:
    chars = case_chars(32_000)
    half = chars - chars // 2
    filler = "lorem ipsum dolor sit amet " * 40_000  # about 1 MB
    encoded = base64.b64encode(VALUE.encode()).decode()
    # Altered forms of the secret straddle the head's cut, the tail's cut and the redaction window's edges.
    text = (
        "START "
        + filler[: half - 10]
        + "zebra_4471"
        + filler[: MARGIN - 8]
        + "Z E B R A 4471"
        + filler
        + "ZEBRA-\n4471"
        + filler[: MARGIN - 8]
        + f"code {encoded} "
        + " polite like a pangolin "
        + filler[: chars // 2 - 30]
        + " END"
    )
    redactor = Redactor([VALUE, RUBRIC])
    shown = reflect(
        Case(id="big", input="go", checks=[]), result("big", "contains"), redactor, label=1, chars=chars
    )
    shown_again = reflect(
        Case(id="big", input="go", checks=[]),
        result("big", "contains", output=Output(text=text)),
        redactor,
        label=1,
        chars=chars,
    )
    assert shown.output_tail == ""  # a short output is shown whole
    head, tail = shown_again.output_head, shown_again.output_tail
    assert head.startswith("START ") and tail.endswith(" END") and shown_again.output_chars == len(text)
    assert len(head) <= half + len(REDACTED) and len(tail) <= chars // 2 + len(REDACTED)
    assert leaked(head + "\n" + tail, [VALUE, RUBRIC]) == []
    # A cut never splits the marker.
    assert re.sub(re.escape(REDACTED), "", head + tail).count("redact") == 0


def many_failures(count: int) -> list[tuple[Case, CaseResult]]:
    huge = Output(text=("x" * 999 + "\n") * 1000 + VALUE, stderr_tail="Traceback: " + VALUE, exit_code=1)
    dev = [(case("huge"), result("huge", "runner", output=huge))]
    for n in range(count - 1):
        dev.append(
            (case(f"c{n:03d}"), result(f"c{n:03d}", "contains", output=Output(text=f"reply {n} " * 40)))
        )
    dev.append((case("fine"), result("fine", passed=True)))
    return dev


@pytest.mark.parametrize("budget", [32_000, 8_000])
def test_a_1mb_output_and_500_failing_cases_stay_within_the_budget(tmp_path: Path, budget: int) -> None:
    dev = many_failures(500)
    view = build_view(
        artifact={"prompt.md": "You are a helpful bot.\n" * 20},
        layer=1,
        dev_results=dev,
        history=[HistoryEntry(n, f"change {n}", "discard") for n in range(20)],
        last_gate=["progress: dev score 0.00 -> 0.00"],
        redactor=Redactor(secrets_for([c for c, _ in dev], [])),
        trace_dir=tmp_path,
        context_tokens=budget,
    )
    prompt = render_prompt(view)
    assert estimate_tokens(prompt) + estimate_tokens(SYSTEM) <= budget
    shown = len(re.findall(r"^\[\d+\] case c\d{3} — fails", prompt, re.MULTILINE))
    assert "[1] case huge — fails (crash)" in prompt and "the start and the end" in prompt
    assert shown >= (10 if budget == 32_000 else 3)
    more = re.search(r"Left out to stay within (\d+) tokens: (\d+) more failing cases", prompt)
    assert more is not None and int(more.group(1)) == budget
    assert int(more.group(2)) == 500 - 1 - shown  # every failing case is either shown or counted
    assert leaked(prompt, [VALUE]) == []


async def test_the_request_sent_stays_within_the_budget(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    dev = many_failures(500)
    view = build_view(
        artifact={"prompt.md": "Be helpful.\n"},
        layer=1,
        dev_results=dev,
        history=[],
        last_gate=[],
        redactor=Redactor([VALUE]),
        trace_dir=tmp_path / "traces",
        context_tokens=8_000,
    )
    llm_server.default = "DESCRIPTION: x\nCITES: [1], [2]\nprompt.md\n<<<<<<< SEARCH\nBe helpful.\n=======\nHi\n>>>>>>> REPLACE\n"
    settings = LLMSettings(model="openai:fake", base_url=llm_server.openai_url, max_retries=0)
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / "prompt.md").write_text("Be helpful.\n")
    proposal = await LLMProposer(settings, use_cache=False).propose(view, worktree, editable=["prompt.md"])
    assert proposal.ok and proposal.citations == ["huge", "c000"]
    sent = llm_server.requests[0]
    assert estimate_tokens(sent.system) + estimate_tokens(sent.user) <= 8_000
    assert "more failing cases" in sent.user


def test_a_stricter_token_counter_shows_fewer_cases(tmp_path: Path) -> None:
    view = build_view(
        artifact={},
        layer=1,
        dev_results=many_failures(60),
        history=[],
        last_gate=[],
        redactor=Redactor([VALUE]),
        trace_dir=tmp_path,
        context_tokens=8_000,
    )

    def per_char(text: str) -> int:
        return len(text)

    estimated, strict = render_prompt(view), render_prompt(view, count=per_char)
    assert len(strict) + len(SYSTEM) <= 8_000 < len(estimated)
    assert strict.count("] case ") < estimated.count("] case ")


class OwnTokenizer:
    """The real client of the scripted server, plus a tokenizer of its own (as a ``local:`` model has): one
    token per character, stricter than the estimate."""

    def __init__(self, settings: LLMSettings) -> None:
        from assay.llm import make_llm

        self.inner = make_llm(settings, cache_dir=None, use_cache=False)
        self.model = self.inner.model
        self.batches: list[int] = []

    async def complete(self, messages: list[dict[str, str]], **options: Any) -> Any:
        return await self.inner.complete(messages, **options)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def count_tokens(self, texts: list[str]) -> list[int]:
        self.batches.append(len(texts))
        return [len(text) for text in texts]


async def test_a_model_with_its_own_tokenizer_counts_the_prompt(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    view = build_view(
        artifact={"prompt.md": "Be helpful.\n"},
        layer=1,
        dev_results=many_failures(60),
        history=[],
        last_gate=[],
        redactor=Redactor([VALUE]),
        trace_dir=tmp_path / "traces",
        context_tokens=8_000,
    )
    llm_server.default = (
        "DESCRIPTION: x\nCITES: [3]\nprompt.md\n<<<<<<< SEARCH\nBe helpful.\n=======\nHi\n>>>>>>> REPLACE\n"
    )
    settings = LLMSettings(model="openai:fake", base_url=llm_server.openai_url, max_retries=0)
    model = OwnTokenizer(settings)
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / "prompt.md").write_text("Be helpful.\n")
    proposal = await LLMProposer(settings, model=model).propose(view, worktree, editable=["prompt.md"])
    assert proposal.ok and proposal.citations == ["c001"] and len(model.batches) == 1
    sent = llm_server.requests[0]
    assert len(sent.system) + len(sent.user) <= 8_000 < estimate_tokens(render_prompt(view)) * 3


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(attacks(), st.integers(-40, 40), st.sampled_from(["head", "tail", "stderr"]))
def test_no_transformed_secret_survives_the_cuts(attack: tuple[str, str], shift: int, where: str) -> None:
    """The attack fixtures of the redactor (random secrets in random chains of transformations), placed in a
    long output or stderr so that they straddle where the head, the tail or the stderr tail is cut."""
    secret, text = attack
    assume(leaked(text, [secret]))
    chars = case_chars(8_000)  # 600 characters: 300 of head, 300 of tail, 300 of stderr
    filler = "log line " * 2000
    cut = chars - chars // 2 if where == "head" else len(filler) - chars // 2
    at = max(0, cut + shift - len(text) // 2)
    body = filler[:at] + text + filler[at:]
    output = Output(text=body, exit_code=1) if where != "stderr" else Output(text="x", exit_code=1)
    if where == "stderr":
        output.stderr_tail = filler[: 2000 - len(text) // 2 + shift] + text + filler[:300]
    shown = reflect(Case(id="c", input="go", checks=[]), result("c", "runner", output=output), Redactor([secret]),
                    label=1, chars=chars)  # fmt: skip
    assert leaked("\n".join([shown.output_head, shown.output_tail, shown.stderr_tail]), [secret]) == []
