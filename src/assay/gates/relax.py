"""Seed 000's trend-aware relaxation of a gate's threshold, shared by the ``trend`` gate and the ratchet.

The gate records, after every decision, the best score (the candidate's on a keep, else the parent's) and the
action. Before judging a candidate it looks for a trigger:

- plateau (3 flat generations): the 3 best scores recorded before this candidate span less than ``min_delta``
  (max − min);
- rollback streak: the last 3 decisions all went back to the best (``rollback``, or the ratchet's ``discard``).

Each decision with a trigger (either or both) halves the effective threshold once more (× ``relax_factor``),
down to a floor of ``min_delta × relax_factor³`` (min_delta / 8 by default); a keep restores ``min_delta``.
"""

from __future__ import annotations

from typing import Any

from assay.model import Dimension

WINDOW = 3  # scores for a plateau, and rollbacks in a row
MAX_RELAXATIONS = 3
ROLLED_BACK = ("rollback", "discard")


def floor(min_delta: float, relax_factor: float) -> float:
    """The lowest the threshold goes: ``min_delta`` relaxed :data:`MAX_RELAXATIONS` times."""
    return min_delta * relax_factor**MAX_RELAXATIONS


class Relaxation:
    """The threshold a gate asks of a gain, relaxed on stagnation (see module docstring), with its memory."""

    def __init__(self, min_delta: float, relax_factor: float = 0.5) -> None:
        self.min_delta = min_delta
        self.relax_factor = relax_factor
        self.threshold = min_delta
        self.best_scores: list[float] = []
        self.actions: list[str] = []

    def relax(self) -> Dimension:
        """Before a decision: relax the threshold once more if a trigger fires; the informational ``trend``
        dimension (always passed) that says what the threshold is and why."""
        recent = self.best_scores[-WINDOW:]
        spread = max(recent) - min(recent) if len(recent) == WINDOW else None
        plateau = spread is not None and spread < self.min_delta
        streak = len(self.actions) >= WINDOW and all(a in ROLLED_BACK for a in self.actions[-WINDOW:])
        if plateau or streak:
            self.threshold = max(floor(self.min_delta, self.relax_factor), self.threshold * self.relax_factor)
        why = [w for w, on in (("plateau", plateau), ("3 rollbacks in a row", streak)) if on]
        return Dimension(
            passed=True,
            detail=f"threshold {self.threshold:.5f} ({', '.join(why)})" if why else "no relaxation",
            numbers={
                "min_delta": self.min_delta,
                "effective_min_delta": self.threshold,
                "spread": spread,
                "plateau": plateau,
                "rollback_streak": streak,
            },
        )

    def record(self, action: str, best: float, score: float) -> None:
        """After a decision: its ``action``, and the best score from now on (``score`` on a keep, else
        ``best``); a keep restores ``min_delta``."""
        kept = action == "keep"
        self.actions.append(action)
        self.best_scores.append(score if kept else best)
        if kept:
            self.threshold = self.min_delta
        del self.best_scores[:-WINDOW], self.actions[:-WINDOW]

    def snapshot(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "best_scores": list(self.best_scores),
            "actions": list(self.actions),
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.threshold = float(snapshot.get("threshold", self.min_delta))
        self.best_scores = [float(s) for s in snapshot.get("best_scores", [])]
        self.actions = [str(a) for a in snapshot.get("actions", [])]
