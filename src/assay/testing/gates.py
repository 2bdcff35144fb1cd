"""The gate suite: :func:`check_gate`, which every registered gate passes and a gate of one's own can run."""

from __future__ import annotations

import json
from collections.abc import Callable

from assay.evaluation.evaluator import EvalResult
from assay.extensions import GATE
from assay.gates import Dimension, Gate, GateDecision, GateInput
from assay.model import CaseResult, Output, Split
from assay.protocols import GateProtocol
from assay.testing._expect import conformed, expect, one_line

ACTIONS = {"keep", "discard", "retry", "rollback"}


def scored(*scores: float) -> EvalResult:
    """Results on dev cases ``c0``, ``c1``, ... with these scores (a score of 0.5 or more passes)."""
    cases = [
        CaseResult(id=f"c{i}", split=Split.DEV, passed=s >= 0.5, score=s, output=Output(text="x"))
        for i, s in enumerate(scores)
    ]
    return EvalResult(cases=cases)


def better() -> GateInput:
    """A candidate that passes every case its parent (the baseline) fails."""
    return GateInput(
        parent=scored(0, 0, 1), candidate=scored(1, 1, 1), baseline=scored(0, 0, 1), parent_id="p"
    )


def worse() -> GateInput:
    """A candidate that fails every case its parent passed but one."""
    return GateInput(
        parent=scored(1, 1, 1), candidate=scored(0, 0, 1), baseline=scored(0, 0, 1), parent_id="p"
    )


async def decides(gate: Gate, data: GateInput, who: str = "gate") -> GateDecision:
    """One decision, checked against what the loop needs of it: a GateDecision whose dimensions are
    Dimensions, whose reasons are one line each, and whose action, when it has one, agrees with ``keep``."""
    decision = await gate.decide(data)
    expect(
        isinstance(decision, GateDecision),
        f"{who}: decide returned {type(decision).__name__}, not a GateDecision",
    )
    expect(
        all(isinstance(d, Dimension) for d in decision.dimensions.values()),
        f"{who}: a dimension of the decision is not a Dimension: {decision.dimensions!r}",
    )
    expect(
        all(one_line(r) for r in decision.reasons),
        f"{who}: a reason is empty or not one line: {decision.reasons!r}",
    )
    if decision.action:
        expect(
            decision.action in ACTIONS,
            f"{who}: unknown action {decision.action!r} (known: {sorted(ACTIONS)})",
        )
        expect(
            decision.keep == (decision.action == "keep"),
            f"{who}: action {decision.action!r} disagrees with keep={decision.keep}",
        )
    return decision


async def check_gate(make: Callable[[], object]) -> None:
    """The gate contract, on gates ``make()`` builds (a fresh one each call): decisions of the right shape
    (:func:`decides`), a candidate worse on every case never kept, and a memory (``snapshot``) that is JSON, that
    a fresh gate takes back (``restore``) to decide as the first would, and that ``restore({})`` forgets.

    A coroutine: ``await check_gate(MyGate)``, or ``asyncio.run(check_gate(MyGate))`` outside an event loop.
    Raises AssertionError naming the part of the contract that failed."""
    raw = make()
    who = f"gate {type(raw).__name__}"
    expect(isinstance(raw, GateProtocol), f"{who}: lacks async decide(data)")
    gate = conformed(GATE, raw, who)
    expect(
        not (await decides(gate, worse(), who)).keep,
        f"{who}: kept a candidate worse on every case it changed",
    )
    await decides(gate, better(), who)
    snapshot = gate.snapshot()
    try:
        as_json = json.loads(json.dumps(snapshot))
    except (TypeError, ValueError) as exc:
        raise AssertionError(f"{who}: snapshot() is not JSON ({exc}): {snapshot!r}") from None
    expect(as_json == snapshot, f"{who}: snapshot() changes through JSON: {snapshot!r} -> {as_json!r}")
    twin = conformed(GATE, make(), who)
    twin.restore(json.loads(json.dumps(snapshot)))
    expect(
        twin.snapshot() == snapshot,
        f"{who}: a fresh gate given the snapshot by restore() remembers {twin.snapshot()!r}, not {snapshot!r}",
    )
    for step, data in enumerate((better(), worse(), better())):
        theirs, ours = (
            (await decides(twin, data, who)).model_dump(),
            (await decides(gate, data, who)).model_dump(),
        )
        expect(
            theirs == ours,
            f"{who}: a restored gate decides otherwise than the one it was restored from (decision {step + 1}):"
            f" {theirs!r} vs {ours!r}",
        )
    fresh = conformed(GATE, make(), who)
    gate.restore({})
    expect(
        gate.snapshot() == fresh.snapshot(),
        f"{who}: restore({{}}) leaves {gate.snapshot()!r}, not a fresh gate's {fresh.snapshot()!r}",
    )
