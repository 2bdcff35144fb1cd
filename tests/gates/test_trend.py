import pytest

from assay.gates import GATES
from assay.gates.backpressure import BackpressureGate
from assay.gates.trend import TrendGate
from tests.gates.test_backpressure import step


async def test_no_relaxation_without_history():
    decision = await step(TrendGate(), 0.5, 0.504)
    assert decision.action == "retry"
    trend = decision.dimensions["trend"]
    assert trend.passed and trend.detail == "no relaxation"
    assert trend.numbers["effective_min_delta"] == 0.005 and trend.numbers["spread"] is None


async def test_plateau_relaxes_so_a_small_gain_advances():
    plain, gate = BackpressureGate(), TrendGate()
    # Three decisions (not all rollbacks) whose best score stays at 0.5: a plateau.
    actions = [(await step(gate, 0.5, score)).action for score in (0.502, 0.502, 0.49)]
    assert actions == ["retry", "retry", "rollback"]
    assert (await step(plain, 0.5, 0.503)).action == "retry"
    decision = await step(gate, 0.5, 0.503)
    assert decision.keep and decision.action == "keep"
    trend = decision.dimensions["trend"]
    assert trend.numbers["plateau"] and trend.numbers["effective_min_delta"] == pytest.approx(0.0025)
    assert trend.numbers["spread"] == 0
    assert decision.dimensions["progress"].numbers["min_delta"] == pytest.approx(0.0025)


async def test_no_plateau_when_scores_moved():
    gate = TrendGate()
    for best, score in [(0.4, 0.45), (0.45, 0.5), (0.5, 0.55)]:
        assert (await step(gate, best, score)).action == "keep"
    decision = await step(gate, 0.55, 0.553)
    assert decision.action == "retry" and not decision.dimensions["trend"].numbers["plateau"]


async def test_three_rollbacks_relax_even_without_plateau():
    gate = TrendGate()
    # The parent moves each time (0.3, 0.4, 0.5): a spread above min_delta, so only the streak triggers.
    for best in (0.3, 0.4, 0.5):
        assert (await step(gate, best, best - 0.1, parent=str(best))).action == "rollback"
    decision = await step(gate, 0.5, 0.503)
    assert decision.action == "keep"
    assert decision.dimensions["trend"].numbers["rollback_streak"]
    assert not decision.dimensions["trend"].numbers["plateau"]


async def test_relaxation_repeats_down_to_the_floor_then_resets_on_advance():
    gate = TrendGate()
    for _ in range(3):
        await step(gate, 0.5, 0.4)
    thresholds = []
    for _ in range(5):
        decision = await step(gate, 0.5, 0.4)
        thresholds.append(decision.dimensions["trend"].numbers["effective_min_delta"])
    assert thresholds == pytest.approx([0.0025, 0.00125, 0.000625, 0.000625, 0.000625])
    assert (await step(gate, 0.5, 0.5007)).action == "keep"
    assert gate.threshold == 0.005


async def test_negative_delta_still_rolls_back_when_relaxed():
    gate = TrendGate()
    for _ in range(3):
        await step(gate, 0.5, 0.4)
    decision = await step(gate, 0.5, 0.4999)
    assert decision.action == "rollback" and decision.dimensions["trend"].numbers["plateau"]


async def test_options_by_name():
    gate = GATES.get("trend")(min_delta=0.1, max_retries=1, relax_factor=0.25)
    for _ in range(3):
        await step(gate, 0.5, 0.4)
    decision = await step(gate, 0.5, 0.53)
    assert decision.action == "keep"
    assert decision.dimensions["trend"].numbers["effective_min_delta"] == pytest.approx(0.025)


def test_registry():
    assert GATES.get("trend") is TrendGate
