"""Budget checks: ``cost`` (USD) and ``latency`` (milliseconds) of one case's output."""

from __future__ import annotations

import contextlib
import math
from abc import abstractmethod
from typing import ClassVar

from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError
from assay.model import CheckResult, CheckSpec, Output


def _limit(spec: CheckSpec, unit: str) -> float:
    value = spec.value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CheckSpecError(f"{spec.type}: value is required: the maximum {unit} (a number)")
    try:
        limit = float(value)
    except OverflowError:  # an integer beyond float's range
        limit = math.inf
    if not 0 <= limit < math.inf:
        raise CheckSpecError(f"{spec.type}: value must be a finite number >= 0, got {limit:g}")
    return limit


class _BudgetCheck(Check):
    """Within the limit scores 1; over it scores limit / actual."""

    unit: ClassVar[str]

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.limit = _limit(spec, self.unit)

    @abstractmethod
    def measure(self, output: Output) -> float:
        """The amount spent, in the limit's unit."""

    @abstractmethod
    def show(self, amount: float) -> str:
        """An amount with its unit, for evidence."""

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        actual = self.measure(output)
        if actual <= self.limit:
            return self.result(True, 1.0, f"{self.show(actual)} within limit {self.show(self.limit)}")
        return self.result(
            False, self.limit / actual, f"{self.show(actual)} over limit {self.show(self.limit)}"
        )


@CHECKS.register("cost")
class CostCheck(_BudgetCheck):
    """The output's ``cost_usd`` is at most ``value`` US dollars."""

    name = "cost"
    unit = "cost in USD"

    def measure(self, output: Output) -> float:
        return output.cost_usd

    def show(self, amount: float) -> str:
        return f"${amount:.6g}"


@CHECKS.register("latency")
class LatencyCheck(_BudgetCheck):
    """The output's ``duration_s`` is at most ``value`` milliseconds (promptfoo's unit)."""

    name = "latency"
    unit = "latency in milliseconds"

    def measure(self, output: Output) -> float:
        return output.duration_s * 1000.0

    def show(self, amount: float) -> str:
        return f"{amount:.0f} ms"
