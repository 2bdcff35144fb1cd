"""Every registered gate passes the gate suite (:func:`assay.testing.gates.check_gate`); a gate registered later
joins it by its name."""

from __future__ import annotations

from typing import Any

import pytest

from assay.extensions import GATE, resolve
from assay.gates import GATES, Dimension, Gate, GateDecision, GateInput
from assay.testing.gates import check_gate

NAMES = GATES.names()


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


class KeepsAnything:
    """A gate of no class of assay's that keeps every candidate: the suite must refuse it."""

    async def decide(self, data: GateInput) -> GateDecision:
        return GateDecision(keep=True, dimensions={})


class ForgetsOnRestore(Streak):
    """A gate whose restore ignores the snapshot: a restored twin decides otherwise."""

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.streak = 0


@pytest.mark.parametrize(
    ("gate", "words"),
    [
        (KeepsAnything, "kept a candidate worse on every case"),
        (ForgetsOnRestore, "given the snapshot by restore.. remembers"),
    ],
)
async def test_the_suite_names_what_a_broken_gate_breaks(gate: type, words: str) -> None:
    with pytest.raises(AssertionError, match=words):
        await check_gate(gate)
