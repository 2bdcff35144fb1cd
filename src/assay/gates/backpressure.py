"""The backpressure gate (autocontext): advance, retry or roll back on the dev score delta.

``delta`` = candidate dev mean score − parent dev mean score (the parent is the best kept so far; mean
score rather than pass rate so partial credit counts).

- ``delta >= min_delta`` → advance: ``keep=True``, action ``"keep"``.
- ``delta < 0`` (or the candidate was blocked by L1) → ``keep=False``, action ``"rollback"`` at once.
- otherwise → ``keep=False``, action ``"retry"``, at most ``max_retries`` consecutive times for the same
  parent; the next one becomes ``"rollback"``.

The retry counter is state kept across calls. The parent is identified by ``GateInput.parent_id``
(the engine passes the parent commit); a missing key counts as the same parent as the previous call.
The counter resets on an advance, on a rollback and when the parent changes.
"""

from __future__ import annotations

from typing import Any

from assay.errors import ConfigError
from assay.gates.base import GATES, Dimension, Gate, GateDecision, GateInput, scope_numbers
from assay.words import plural

# Float sums of case scores are not exact: a delta equal to min_delta on paper must still advance.
EPSILON = 1e-9


def check_options(min_delta: float, max_retries: int, relax_factor: float) -> None:
    """Raise a one-line ConfigError for gate options out of range."""
    if min_delta < 0:
        raise ConfigError(f"min_delta must be >= 0, got {min_delta}", field="gate.min_delta")
    if max_retries < 0:
        raise ConfigError(f"max_retries must be >= 0, got {max_retries}", field="gate.max_retries")
    if not 0 < relax_factor <= 1:
        raise ConfigError(f"relax_factor must be in (0, 1], got {relax_factor}", field="gate.relax_factor")


@GATES.register("backpressure")
class BackpressureGate(Gate):
    """Advance / retry / rollback on ``min_delta`` with a per-parent retry budget (see module docstring).

    ``relax_factor`` is accepted (and validated) so one option set builds either this gate or ``trend``;
    this gate never relaxes.
    """

    name = "backpressure"

    def __init__(self, *, min_delta: float = 0.005, max_retries: int = 2, relax_factor: float = 0.5) -> None:
        check_options(min_delta, max_retries, relax_factor)
        self.min_delta = min_delta
        self.max_retries = max_retries
        self.relax_factor = relax_factor
        self.retries = 0
        self.parent: str | None = None

    async def decide(self, data: GateInput) -> GateDecision:
        return self.decide_at(data, self.min_delta)

    def snapshot(self) -> dict[str, Any]:
        return {"retries": self.retries, "parent": self.parent}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.retries = int(snapshot.get("retries", 0))
        parent = snapshot.get("parent")
        self.parent = str(parent) if parent is not None else None

    def decide_at(self, data: GateInput, threshold: float) -> GateDecision:
        """Decide against ``threshold`` instead of ``min_delta`` (used by the trend gate), updating state."""
        if data.parent_id and data.parent_id != self.parent:
            self.parent = data.parent_id
            self.retries = 0
        parent, candidate = data.for_progress()
        best, score = data.scores or (parent.mean_score, candidate.mean_score)
        scope = "" if data.scores else data.progress_scope()
        delta = score - best
        if data.candidate.blocked or delta < 0:
            action, detail = "rollback", f"score fell {best:.4f} -> {score:.4f}{scope}"
            if data.candidate.blocked:
                detail = "blocked by the static tier"
        elif delta >= threshold - EPSILON:
            action, detail = "keep", f"delta {delta:+.4f} >= {threshold:.4f}{scope}"
        elif self.retries < self.max_retries:
            self.retries += 1
            action = "retry"
            detail = f"delta {delta:+.4f} < {threshold:.4f}{scope}: retry {self.retries}/{self.max_retries}"
        else:
            action = "rollback"
            detail = f"delta {delta:+.4f} < {threshold:.4f}{scope} after {plural(self.retries, 'retry', 'retries')}"
        numbers = {
            "measure": "match score" if data.scores else "dev score",
            "best_score": best,
            "score": score,
            "delta": delta,
            "min_delta": threshold,
            "retries": self.retries,
            "max_retries": self.max_retries,
        }
        if not data.scores:
            numbers.update(scope_numbers(*data.progress_counts()))
        if action != "retry":
            self.retries = 0
        keep = action == "keep"
        progress = Dimension(passed=keep, detail=detail, numbers=numbers)
        return GateDecision(keep=keep, dimensions={"progress": progress}, action=action)
