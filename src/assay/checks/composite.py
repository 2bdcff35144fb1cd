"""Checks made of other checks, or standing for one assay cannot run: ``assert_set`` and ``unsupported``.

- ``assert_set`` (promptfoo's ``assert-set``): ``value`` is a list of check specs judged together as one
  check: its score is their weighted mean; it passes when every one passes, or, with a ``threshold``,
  when the score reaches it.
- ``unsupported``: stands for a check a suite asks for that assay cannot run (``value`` says which and
  why, e.g. a provider's moderation API). The suite loads and its other checks run; this one fails with
  that reason, so the case is never passed without it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError, CheckUnavailable, build_check
from assay.checks.text import clip
from assay.model import CheckResult, CheckSpec, Output


@CHECKS.register("assert_set")
class AssertSetCheck(Check):
    """Several checks as one (see the module docstring)."""

    name = "assert_set"

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        items: Any = spec.value
        if not isinstance(items, list) or not items:
            raise CheckSpecError("assert_set: value must be a non-empty list of checks")
        self.parts: list[Check] = []
        for index, item in enumerate(items):
            try:
                part = item if isinstance(item, CheckSpec) else CheckSpec.model_validate(item)
            except ValidationError as exc:
                raise CheckSpecError(f"assert_set: check {index}: {exc.errors()[0]['msg']}") from None
            self.parts.append(build_check(part))

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        results = [await part.run(output, ctx) for part in self.parts]
        weight = sum(r.weight for r in results)
        score = sum(r.score * r.weight for r in results) / weight if weight else 0.0
        failed = [r for r in results if not r.passed]
        passed = not failed if self.spec.threshold is None else score >= self.spec.threshold
        evidence = f"{len(results) - len(failed)}/{len(results)} checks pass"
        if failed:
            evidence += "; " + "; ".join(f"{r.type}: {r.evidence}" for r in failed[:3])
        result = self.result(passed, score, clip(evidence))
        for r in results:
            result.tokens_in += r.tokens_in
            result.tokens_out += r.tokens_out
            result.cost_usd += r.cost_usd
        return result


@CHECKS.register("unsupported")
class UnsupportedCheck(Check):
    """A check this suite asks for that assay cannot run; fails with the reason in ``value``."""

    name = "unsupported"

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        if not isinstance(spec.value, str) or not spec.value.strip():
            raise CheckSpecError("unsupported: value must say which check and why it cannot run")

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        raise CheckUnavailable(f"not supported by assay: {self.spec.value}")


def needs_judge(spec: CheckSpec, given: Mapping[str, object] | None = None) -> bool:
    """Whether judging with this spec asks the judge model (checks of an ``assert_set`` included). A type
    ``given`` a check of the caller's own (an object or a class) asks it only when that check says it is
    ``judged``."""
    if spec.type == "assert_set" and isinstance(spec.value, list):
        return any(
            needs_judge(item if isinstance(item, CheckSpec) else CheckSpec.model_validate(item), given)
            for item in spec.value
            if isinstance(item, CheckSpec | dict)
        )
    if given and spec.type in given:
        return bool(getattr(given[spec.type], "judged", False))
    return spec.type in CHECKS and CHECKS.get(spec.type).judged
