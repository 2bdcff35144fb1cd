"""The noise-aware gate: progress and regression judged on repeated runs by a paired sequential test.

Structure, cost and safety are the ratchet's own checks (inherited from `RatchetGate`). Progress is the
sequential comparison of `assay.stats.compare_sequential`: the candidate must be significantly better than
the parent over repeated runs. Regression: no case may be significantly worse on its own, and a case whose
parent runs all passed may not fail all its candidate runs once confirmed (docs/noise.md).

``GateInput`` fields read (all optional; without them the gate judges the one run per case it has):

- ``sampler``: an `assay.stats.Sampler`, ``async (case_id, "parent" | "candidate", n) -> list[float]``,
  returning n new runs (1 pass, 0 fail) of that side.
- ``parent_runs``: ``{case_id: [run, ...]}``, the parent's runs from its own measurement (reused, not re-paid).
  Default: the parent's dev verdicts, one run per case.
- ``candidate_runs``: the candidate's runs already made. Default: its dev verdicts, one run per case.

The decision's ``progress`` numbers carry the full log record (``SequentialResult.to_dict()``), including
``extra_parent_runs`` and ``extra_candidate_runs`` for the budgets.

The strict rule stays selectable under the name ``ratchet_strict`` (an alias of ``ratchet``).
"""

from __future__ import annotations

from typing import Any

from assay.evaluation.evaluator import EvalResult
from assay.gates.base import GATES, Dimension, GateDecision, GateInput, scope_numbers, subset_note
from assay.gates.ratchet import RatchetGate
from assay.stats import SequentialOptions, SequentialResult, compare_sequential

GATES.register("ratchet_strict")(RatchetGate)


def _verdicts(result: EvalResult) -> dict[str, list[float]]:
    return {c.id: [1.0 if c.passed else 0.0] for c in result.judged}


@GATES.register("noisy", "paired")
class PairedGate(RatchetGate):
    """Keep a candidate only when it is significantly better over repeated runs, no case regressed, and
    the ratchet's structure, cost and safety checks pass."""

    name = "noisy"

    def __init__(self, *, options: SequentialOptions | None = None, cost_factor: float = 2.0) -> None:
        super().__init__(cost_factor=cost_factor)
        self.options = options or SequentialOptions()

    async def decide(self, data: GateInput) -> GateDecision:
        structure = self._structure(data)
        scope, counts = "", (0, 0)
        if not structure.passed:  # L1 blocked it: no runs worth paying for
            result = None
        else:
            # Unfixable cases (the best fails them generation after generation) cannot regress: they are left
            # out of the test, so they do not count toward progress either.
            parent, candidate = data.for_progress()
            parent_runs = data.parent_runs or _verdicts(parent)
            candidate_runs = data.candidate_runs or _verdicts(candidate)
            compared = {k: v for k, v in candidate_runs.items() if k not in data.unfixable}
            measured = {*candidate_runs, *(c.id for c in data.candidate.judged)}
            counts = (len(compared), len(measured) - len(compared))
            scope = subset_note(*counts)
            result = await compare_sequential(
                {k: v for k, v in parent_runs.items() if k not in data.unfixable},
                data.sampler,
                candidate_runs=compared,
                options=self.options,
            )
        dims = {
            "structure": structure,
            "progress": self._paired_progress(result, scope, counts),
            "regression": self._paired_regression(result),
            "cost": self._cost(data),
            "safety": self._safety(data),
        }
        keep = all(d.passed for d in dims.values())
        return GateDecision(keep=keep, dimensions=dims, action="keep" if keep else "discard")

    def _paired_progress(
        self, result: SequentialResult | None, scope: str = "", counts: tuple[int, int] = (0, 0)
    ) -> Dimension:
        if result is None:
            return Dimension(passed=False, detail="not compared (structure failed)")
        numbers: dict[str, Any] = result.to_dict() | scope_numbers(*counts)
        effect, low, high = result.effect
        detail = (
            f"{result.decision}: effect {effect:+.3f} [{low:+.3f}, {high:+.3f}]{scope}, "
            f"p={result.p_value:.4f}, {result.looks} looks, {result.extra_runs} extra runs; {result.reason}"
        )
        return Dimension(passed=result.decision == "better", detail=detail, numbers=numbers)

    def _paired_regression(self, result: SequentialResult | None) -> Dimension:
        regressed = result.regressed if result else []
        numbers: dict[str, Any] = {"regressed": regressed}
        if regressed:
            return Dimension(
                passed=False,
                detail=f"{len(regressed)} cases significantly worse: {', '.join(regressed[:5])}",
                numbers=numbers,
            )
        return Dimension(passed=True, detail="no case significantly worse", numbers=numbers)
