"""The trend gate (autocontext's trend-aware relaxation): backpressure whose threshold relaxes on stagnation.

It records, after every decision, the best score (the candidate's on an advance, else the parent's) and the
action. Before judging a candidate it looks for a trigger:

- plateau: the 3 best scores recorded before this candidate span less than ``min_delta`` (max − min);
- rollback streak: the last 3 decisions were all rollbacks.

Each decision with a trigger (either or both) halves the effective threshold once more (× ``relax_factor``),
down to a floor of ``min_delta × relax_factor³`` (min_delta / 8 by default); an advance restores
``min_delta``. The relaxed threshold only lowers the bar to advance: a negative delta still rolls back.
Every decision carries a ``"trend"`` dimension (informational, always passed) with the numbers.
"""

from __future__ import annotations

from typing import Any

from assay.gates.backpressure import BackpressureGate
from assay.gates.base import GATES, Dimension, Gate, GateDecision, GateInput

WINDOW = 3  # scores for a plateau, and rollbacks in a row
MAX_RELAXATIONS = 3


@GATES.register("trend")
class TrendGate(Gate):
    """Backpressure with trend-aware relaxation of ``min_delta`` (see module docstring)."""

    name = "trend"

    def __init__(self, *, min_delta: float = 0.005, max_retries: int = 2, relax_factor: float = 0.5) -> None:
        self.inner = BackpressureGate(min_delta=min_delta, max_retries=max_retries, relax_factor=relax_factor)
        self.min_delta = min_delta
        self.relax_factor = relax_factor
        self.threshold = min_delta
        self.best_scores: list[float] = []
        self.actions: list[str] = []

    def snapshot(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "best_scores": list(self.best_scores),
            "actions": list(self.actions),
            "inner": self.inner.snapshot(),
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.threshold = float(snapshot.get("threshold", self.min_delta))
        self.best_scores = [float(s) for s in snapshot.get("best_scores", [])]
        self.actions = [str(a) for a in snapshot.get("actions", [])]
        self.inner.restore(snapshot.get("inner", {}))

    async def decide(self, data: GateInput) -> GateDecision:
        recent = self.best_scores[-WINDOW:]
        spread = max(recent) - min(recent) if len(recent) == WINDOW else None
        plateau = spread is not None and spread < self.min_delta
        streak = len(self.actions) >= WINDOW and all(a == "rollback" for a in self.actions[-WINDOW:])
        floor = self.min_delta * self.relax_factor**MAX_RELAXATIONS
        if plateau or streak:
            self.threshold = max(floor, self.threshold * self.relax_factor)
        decision = self.inner.judge(data, self.threshold)
        why = [w for w, on in (("plateau", plateau), ("3 rollbacks in a row", streak)) if on]
        detail = f"threshold {self.threshold:.5f} ({', '.join(why)})" if why else "no relaxation"
        decision.dimensions["trend"] = Dimension(
            passed=True,
            detail=detail,
            numbers={
                "min_delta": self.min_delta,
                "effective_min_delta": self.threshold,
                "spread": spread,
                "plateau": plateau,
                "rollback_streak": streak,
            },
        )
        self.actions.append(decision.action)
        parent, candidate = data.for_progress()
        best, score = data.scores or (parent.mean_score, candidate.mean_score)
        if decision.keep:
            self.best_scores.append(score)
            self.threshold = self.min_delta
        else:
            self.best_scores.append(best)
        del self.best_scores[:-WINDOW], self.actions[:-WINDOW]
        return decision
