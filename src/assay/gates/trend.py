"""The trend gate (autocontext's trend-aware relaxation): backpressure whose threshold relaxes on stagnation.

The relaxation is :mod:`assay.gates.relax`'s (3 flat generations or 3 rollbacks in a row halve ``min_delta``,
down to min_delta / 8; an advance restores it), judged on the score backpressure judges: the dev mean score, or
the tournament's when ``gate_input: tournament``. The relaxed threshold only lowers the bar to advance: a
negative delta still rolls back. Every decision carries a ``"trend"`` dimension (informational, always passed)
with the numbers.
"""

from __future__ import annotations

from typing import Any

from assay.gates.backpressure import BackpressureGate
from assay.gates.base import GATES, Gate, GateDecision, GateInput
from assay.gates.relax import Relaxation


@GATES.register("trend")
class TrendGate(Gate):
    """Backpressure with trend-aware relaxation of ``min_delta`` (see module docstring)."""

    name = "trend"

    def __init__(self, *, min_delta: float = 0.005, max_retries: int = 2, relax_factor: float = 0.5) -> None:
        self.inner = BackpressureGate(min_delta=min_delta, max_retries=max_retries, relax_factor=relax_factor)
        self.relaxation = Relaxation(min_delta, relax_factor)

    @property
    def threshold(self) -> float:
        """The effective ``min_delta`` the next decision starts from."""
        return self.relaxation.threshold

    def snapshot(self) -> dict[str, Any]:
        return {**self.relaxation.snapshot(), "inner": self.inner.snapshot()}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.relaxation.restore(snapshot)
        self.inner.restore(snapshot.get("inner", {}))

    async def decide(self, data: GateInput) -> GateDecision:
        trend = self.relaxation.relax()
        decision = self.inner.decide_at(data, self.relaxation.threshold)
        decision.dimensions["trend"] = trend
        parent, candidate = data.for_progress()
        best, score = data.scores or (parent.mean_score, candidate.mean_score)
        self.relaxation.record(decision.action, best, score)
        return decision
