"""One suite every registered gate must pass (a gate registered later joins it by its name)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from assay.evaluation.evaluator import EvalResult
from assay.extensions import GATE, resolve
from assay.gates import GATES, Dimension, Gate, GateDecision, GateInput
from assay.model import CaseResult, Output, Split
from assay.protocols import GateProtocol

NAMES = GATES.names()
ACTIONS = {"keep", "discard", "retry", "rollback"}


def scored(*scores: float) -> EvalResult:
    cases = [
        CaseResult(id=f"c{i}", split=Split.DEV, passed=s >= 0.5, score=s, output=Output(text="x"))
        for i, s in enumerate(scores)
    ]
    return EvalResult(cases=cases)


def better() -> GateInput:
    return GateInput(
        parent=scored(0, 0, 1), candidate=scored(1, 1, 1), baseline=scored(0, 0, 1), parent_id="p"
    )


def worse() -> GateInput:
    return GateInput(
        parent=scored(1, 1, 1), candidate=scored(0, 0, 1), baseline=scored(0, 0, 1), parent_id="p"
    )


async def decides(gate: Gate, data: GateInput) -> GateDecision:
    """One decision, checked against what the loop needs of it."""
    decision = await gate.decide(data)
    assert isinstance(decision, GateDecision)
    assert all(isinstance(d, Dimension) for d in decision.dimensions.values())
    assert all(reason and "\n" not in reason for reason in decision.reasons)
    if decision.action:
        assert decision.action in ACTIONS and decision.keep == (decision.action == "keep")
    return decision


async def check_gate(make: Callable[[], Gate]) -> None:
    """The contract: decisions of the right shape, a candidate worse on every case never kept, and a memory
    (``snapshot``) that is JSON and that a fresh gate takes back (``restore``) to decide as the first would."""
    gate = make()
    assert isinstance(gate, GateProtocol) and isinstance(gate, Gate)
    assert not (await decides(gate, worse())).keep
    await decides(gate, better())
    snapshot = gate.snapshot()
    assert json.loads(json.dumps(snapshot)) == snapshot
    twin = make()
    twin.restore(json.loads(json.dumps(snapshot)))
    assert twin.snapshot() == snapshot
    for data in (better(), worse(), better()):
        assert (await decides(twin, data)).model_dump() == (await decides(gate, data)).model_dump()
    fresh = make()
    gate.restore({})
    assert gate.snapshot() == fresh.snapshot()


@pytest.mark.parametrize("name", NAMES)
async def test_registered_gate_conforms(name: str) -> None:
    await check_gate(lambda: resolve(GATE, name))


def test_every_gate_is_in_the_suite() -> None:
    assert {"ratchet", "ratchet_strict", "noisy", "paired", "backpressure", "trend"} <= set(NAMES)


class Streak(Gate):
    """A dummy gate that remembers how many candidates in a row it kept."""

    name = "streak"

    def __init__(self) -> None:
        self.streak = 0

    async def decide(self, data: GateInput) -> GateDecision:
        gain = data.candidate.mean_score - data.parent.mean_score
        self.streak = self.streak + 1 if gain > 0 else 0
        detail = f"gain {gain:+.3f}, streak {self.streak}"
        return GateDecision(keep=gain > 0, dimensions={"progress": Dimension(passed=gain > 0, detail=detail)})

    def snapshot(self) -> dict[str, Any]:
        return {"streak": self.streak}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.streak = int(snapshot.get("streak", 0))


async def test_a_registered_dummy_joins_the_suite(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(GATES._items, "streak", Streak)
    assert "streak" in GATES.names()
    await check_gate(lambda: resolve(GATE, "streak"))
    monkeypatch.undo()
    assert "streak" not in GATES.names()
