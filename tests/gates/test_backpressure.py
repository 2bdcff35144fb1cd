from dataclasses import replace

import pytest

from assay.errors import ConfigError
from assay.evaluation.evaluator import EvalResult
from assay.gates import GATES, GateInput
from assay.gates.backpressure import BackpressureGate
from assay.model import CaseResult, Output, Split
from assay.static.report import Finding, StaticReport

CRITICAL = StaticReport(findings=[Finding(severity="critical", rule="secret", file="p.md", message="a key")])


def scored(*scores: float, static: StaticReport | None = None) -> EvalResult:
    cases = [
        CaseResult(id=f"c{i}", split=Split.DEV, passed=s >= 0.5, score=s, output=Output(text="x"))
        for i, s in enumerate(scores)
    ]
    return EvalResult(cases=cases, static=static)


async def step(gate, best: float, score: float, parent: str = "p1"):
    data = GateInput(parent=scored(best), candidate=scored(score), baseline=scored(best), parent_id=parent)
    return await gate.decide(data)


@pytest.mark.parametrize(
    ("best", "score"),
    [(0.5, 0.505), (0.495, 0.5), (0.2, 0.205), (0.6, 0.9)],
)
async def test_delta_at_or_above_min_delta_advances(best, score):
    decision = await step(BackpressureGate(), best, score)
    assert decision.keep and decision.action == "keep"
    assert decision.dimensions["progress"].numbers["delta"] == pytest.approx(score - best)


async def test_delta_is_on_the_dev_mean_score():
    data = GateInput(parent=scored(1.0, 0.0), candidate=scored(0.6, 0.6), baseline=scored(0.0))
    decision = await BackpressureGate().decide(data)
    assert decision.keep
    assert decision.dimensions["progress"].numbers["delta"] == pytest.approx(0.1)


async def test_tiny_positive_delta_retries_then_rolls_back():
    gate = BackpressureGate()
    actions = [(await step(gate, 0.5, 0.504)).action for _ in range(4)]
    assert actions == ["retry", "retry", "rollback", "retry"]


async def test_retry_numbers_and_reason():
    gate = BackpressureGate()
    decision = await step(gate, 0.5, 0.501)
    assert not decision.keep
    numbers = dict(decision.dimensions["progress"].numbers)
    assert numbers.pop("measure") == "dev score"  # "match score" when the tournament feeds the gate
    assert numbers == pytest.approx(
        {
            "best_score": 0.5,
            "score": 0.501,
            "delta": 0.001,
            "min_delta": 0.005,
            "retries": 1,
            "max_retries": 2,
        }
    )
    assert decision.reasons == ["progress: delta +0.0010 < 0.0050: retry 1/2"]
    third = [await step(gate, 0.5, 0.501) for _ in range(2)][-1]
    assert third.action == "rollback" and third.dimensions["progress"].numbers["retries"] == 2


@pytest.mark.parametrize("score", [0.499, 0.0])
async def test_negative_delta_rolls_back_at_once(score):
    decision = await step(BackpressureGate(), 0.5, score)
    assert not decision.keep and decision.action == "rollback"


async def test_blocked_candidate_rolls_back():
    gate = BackpressureGate(min_delta=0.0)
    data = GateInput(parent=scored(0.0), candidate=scored(static=CRITICAL), baseline=scored(0.0))
    assert (await gate.decide(data)).action == "rollback"


async def test_counter_resets_on_advance():
    gate = BackpressureGate()
    await step(gate, 0.5, 0.502)
    await step(gate, 0.5, 0.502)
    assert (await step(gate, 0.5, 0.6)).action == "keep"
    assert [(await step(gate, 0.6, 0.601)).action for _ in range(3)] == ["retry", "retry", "rollback"]


async def test_counter_resets_on_new_parent():
    gate = BackpressureGate()
    await step(gate, 0.5, 0.502, parent="p1")
    await step(gate, 0.5, 0.502, parent="p1")
    decision = await step(gate, 0.5, 0.502, parent="p2")
    assert decision.action == "retry" and decision.dimensions["progress"].numbers["retries"] == 1


async def test_options_by_name():
    gate = GATES.get("backpressure")(min_delta=0.1, max_retries=0)
    assert (await step(gate, 0.5, 0.55)).action == "rollback"
    assert (await step(gate, 0.5, 0.6)).action == "keep"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"min_delta": -1}, "min_delta"),
        ({"max_retries": -1}, "max_retries"),
        ({"relax_factor": 0}, "relax_factor"),
    ],
)
def test_bad_options_fail_in_one_line(options, field):
    with pytest.raises(ConfigError, match=f"gate.{field}"):
        BackpressureGate(**options)


def test_registry():
    assert GATES.get("backpressure") is BackpressureGate


async def test_a_delta_on_a_subset_says_so():
    # c1 failed in both (unfixable, unmoved): the delta is on c0 alone, and the detail says so.
    data = GateInput(
        parent=scored(0.5, 0.0),
        candidate=scored(0.6, 0.0),
        baseline=scored(0.5, 0.0),
        unfixable=frozenset({"c1"}),
    )
    decision = await BackpressureGate().decide(data)
    assert decision.dimensions["progress"].detail == (
        "delta +0.1000 >= 0.0050 on the 1 dev case not yet marked unfixable (1 left out)"
    )
    # Scores given by the tournament are not the dev cases': no label.
    matched = replace(data, scores=(0.5, 0.6))
    assert (await BackpressureGate().decide(matched)).dimensions[
        "progress"
    ].detail == "delta +0.1000 >= 0.0050"
