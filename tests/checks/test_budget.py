from __future__ import annotations

from typing import Any

import pytest

from assay.checks import CheckContext, CheckSpecError, build_check
from assay.model import Case, CheckResult, CheckSpec, Output


async def judge(output: Output, type_: str, value: Any, **kw: Any) -> CheckResult:
    check = build_check(CheckSpec(type=type_, value=value, **kw))
    return await check.run(output, CheckContext(case=Case(id="c1")))


async def test_cost_within_and_over_the_limit() -> None:
    within = await judge(Output(cost_usd=0.01), "cost", 0.05)
    assert within.passed and within.score == 1 and within.evidence == "$0.01 within limit $0.05"
    over = await judge(Output(cost_usd=0.2), "cost", 0.05)
    assert not over.passed and over.score == pytest.approx(0.25)
    assert over.evidence == "$0.2 over limit $0.05"
    assert (await judge(Output(cost_usd=0.05), "cost", "0.05")).passed


async def test_latency_in_milliseconds() -> None:
    fast = await judge(Output(duration_s=0.25), "latency", 500)
    assert fast.passed and fast.evidence == "250 ms within limit 500 ms"
    slow = await judge(Output(duration_s=2.0), "latency", 500)
    assert (
        not slow.passed and slow.score == pytest.approx(0.25) and slow.evidence == "2000 ms over limit 500 ms"
    )


async def test_zero_limit() -> None:
    assert (await judge(Output(cost_usd=0.0), "cost", 0)).passed
    over = await judge(Output(cost_usd=0.001), "cost", 0)
    assert not over.passed and over.score == 0


async def test_negation_and_threshold_through_run() -> None:
    negated = await judge(Output(duration_s=2.0), "latency", 500, negate=True)
    assert negated.passed and negated.score == pytest.approx(0.75)
    lenient = await judge(Output(duration_s=0.6), "latency", 500, threshold=0.8)
    assert lenient.passed and lenient.score == pytest.approx(500 / 600)


@pytest.mark.parametrize(
    ("type_", "value", "message"),
    [
        ("cost", None, "cost: value is required: the maximum cost in USD (a number)"),
        ("cost", "cheap", "cost: value is required: the maximum cost in USD (a number)"),
        ("cost", True, "cost: value is required"),
        ("latency", -1, "latency: value must be a finite number >= 0, got -1"),
        ("cost", float("inf"), "cost: value must be a finite number >= 0, got inf"),
        ("latency", [100], "latency: value is required: the maximum latency in milliseconds"),
    ],
)
def test_bad_limits(type_: str, value: Any, message: str) -> None:
    with pytest.raises(CheckSpecError) as info:
        build_check(CheckSpec(type=type_, value=value))
    assert str(info.value).startswith(message)
