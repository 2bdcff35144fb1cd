"""One suite every registered check type must pass: built from a minimal valid spec (``{"value": "x"}``, or
the one in ``SPECS``: a check type registered later adds its own there if that one does not fit), it judges
an output and returns a CheckResult with a score in [0, 1], negated as the base class says. Judged checks
ask a fake model; a check that cannot judge here (no node, no server) returns a failed result, which is
still one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.checks import CHECKS, Check, CheckContext, build_check
from assay.extensions import CHECK, resolve
from assay.llm.base import Completion
from assay.model import Case, CheckResult, CheckSpec, Output
from assay.protocols import CheckProtocol

NAMES = CHECKS.names()
SPECS: dict[str, dict[str, Any]] = {
    "assert_set": {"value": [{"type": "contains", "value": "x"}]},
    "contains_json": {"value": None},
    "cost": {"value": 1},
    "json_schema": {"value": {"type": "object"}},
    "javascript": {"value": "output === 'x'"},
    "latency": {"value": 1},
    "max_length": {"value": 1},
    "min_length": {"value": 1},
    "python": {"value": "output == 'x'"},
    "script": {"value": "exit 0"},
    "tool_call_valid": {"value": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
    "webhook": {"value": "http://127.0.0.1:9/hook", "options": {"timeout": 2}},
    "word_count": {"value": 1},
}
CASE = Case(id="c1", input="Say x.", expected="x")


class Grader:
    """A fake judge model: every answer says the output passes, in the forms the judged checks parse."""

    model = "fake:grader"

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        system: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        sample: int = 0,
    ) -> Completion:
        return Completion(text='{"pass": true, "score": 1.0, "reason": "fine"}\nVERDICT: PASS\nSCORE: 1')

    async def aclose(self) -> None:
        return None


def spec(name: str, **extra: Any) -> CheckSpec:
    return CheckSpec(type=name, **{**SPECS.get(name, {"value": "x"}), **extra})


async def judged(check: Check, tmp_path: Path) -> CheckResult:
    ctx = CheckContext(case=CASE, workdir=tmp_path, judge=Grader(), judge_votes=1, project_dir=tmp_path)
    result = await check.run(Output(text="x", duration_s=0.1), ctx)
    assert isinstance(result, CheckResult)
    assert 0.0 <= result.score <= 1.0 and isinstance(result.passed, bool)
    assert result.type == check.spec.label()
    return result


async def check_check(name: str, tmp_path: Path) -> None:
    """The contract: builds from a minimal spec (by name through the resolver too), prepares, and judges with a
    score in [0, 1]; negated, a judgement is turned round (an error stays a failure)."""
    check = build_check(spec(name))
    assert isinstance(check, CheckProtocol) and type(resolve(CHECK, name, spec(name))) is type(check)
    check.prepare(tmp_path)
    result = await judged(check, tmp_path)
    negated = build_check(spec(name, negate=True))
    negated.prepare(tmp_path)
    turned = await judged(negated, tmp_path)
    if result.error:
        assert (turned.passed, turned.score) == (False, 0.0)
    elif not turned.error:
        assert turned.passed is not result.passed
        assert turned.score == pytest.approx(1.0 - result.score)


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.embed) if n == "similar" else n for n in NAMES]
)
async def test_registered_check_conforms(name: str, tmp_path: Path) -> None:
    await check_check(name, tmp_path)


def test_every_spec_names_a_registered_check() -> None:
    assert set(SPECS) <= set(NAMES) and len(NAMES) >= 50


class ShorterThan(Check):
    """A dummy check: the output has fewer characters than the value; the score is how far below it is."""

    name = "shorter_than"

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        limit = int(self.spec.value)
        return self.result(len(output.text) < limit, max(0.0, 1 - len(output.text) / limit))


async def test_a_registered_dummy_joins_the_suite(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(CHECKS._items, "shorter_than", ShorterThan)
    monkeypatch.setitem(SPECS, "shorter_than", {"value": 4})
    assert "shorter_than" in CHECKS.names()
    await check_check("shorter_than", tmp_path)
