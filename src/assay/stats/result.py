"""The outcome of a sequential comparison, with a JSON-able form for logs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from assay.stats.stratified import StratifiedTest

TestDecision = Literal["better", "worse", "undecided"]


@dataclass(frozen=True)
class SequentialResult:
    """``decision`` (undecided means discard), why, the final test, the effect (mean per-case difference
    in pass rate) with its confidence interval as (effect, low, high), regressed cases, the runs used per case
    on each side, and how many runs were added (``extra_runs``: charge them to the budgets)."""

    decision: TestDecision
    reason: str
    test: StratifiedTest
    effect: tuple[float, float, float]
    regressed: list[str]
    looks: int
    level: float
    parent_runs: dict[str, list[float]]
    candidate_runs: dict[str, list[float]]
    extra_parent_runs: int
    extra_candidate_runs: int

    @property
    def extra_runs(self) -> int:
        return self.extra_parent_runs + self.extra_candidate_runs

    @property
    def p_value(self) -> float:
        """The one-sided p-value of the direction the data lean to."""
        return self.test.p_worse if self.test.z < 0 else self.test.p_better

    def to_dict(self) -> dict[str, Any]:
        """Everything a log line needs: decision, effect with CI, p-values, runs per case, extra runs."""
        t = self.test
        return {
            "decision": self.decision,
            "reason": self.reason,
            "effect": self.effect[0],
            "ci": [self.effect[1], self.effect[2]],
            "z": t.z,
            "p_better": t.p_better,
            "p_worse": t.p_worse,
            "exact": t.exact,
            "level": self.level,
            "looks": self.looks,
            "regressed": self.regressed,
            "runs": {
                cid: {
                    "parent": len(self.parent_runs[cid]),
                    "candidate": len(self.candidate_runs.get(cid, [])),
                }
                for cid in sorted(self.parent_runs)
            },
            "extra_parent_runs": self.extra_parent_runs,
            "extra_candidate_runs": self.extra_candidate_runs,
        }
