"""How check results combine into a case verdict."""

from __future__ import annotations

from collections.abc import Sequence

from assay.checks.base import Check
from assay.model import Case, CheckResult, Output


def runner_check(output: Output) -> CheckResult | None:
    """A failed pseudo-check for a runner error, timeout or crash (None when the runner ran cleanly)."""
    if output.ok:
        return None
    reason = "timed out" if output.timed_out and not output.error else output.error
    tail = output.stderr_tail.strip().splitlines()[-3:] if output.stderr_tail else []
    evidence = reason or "runner failed"
    if tail:
        evidence += " | stderr: " + " / ".join(tail)
    return CheckResult(type="runner", passed=False, score=0.0, evidence=evidence[:500])


def _weight_total(results: Sequence[CheckResult]) -> tuple[float, float]:
    """(Σ weight × score, Σ weight), with every weight 1 when they all are 0 (the plain mean then)."""
    total = sum(r.weight for r in results)
    if total > 0:
        return sum(r.score * r.weight for r in results), total
    return sum(r.score for r in results), float(len(results))


def decided_without(
    case: Case, done: Sequence[CheckResult], pending: Sequence[float], runner_failed: bool
) -> bool:
    """Whether the case's verdict is the same whatever the ``pending`` checks (given by their weights) return:
    then they need not run. Cheap checks run first; a judge is asked only when its verdict can matter."""
    if not pending:
        return True
    if runner_failed:
        return True
    if case.threshold is None:  # passes only if every check passes: one failure decides it
        return any(not r.passed for r in done if r.weight > 0)
    weights = [r.weight for r in done] + list(pending)
    total = sum(weights)
    if total > 0:
        known = sum(r.score * r.weight for r in done)
        low, high = known / total, (known + sum(pending)) / total
    else:
        known = sum(r.score for r in done)
        low, high = known / len(weights), (known + len(pending)) / len(weights)
    if low >= case.threshold:
        return True  # passes by threshold whatever the judge says
    return (
        any(not r.passed for r in done if r.weight > 0) and high < case.threshold
    )  # fails whatever the judge says


def combine(case: Case, results: list[CheckResult], runner_failed: bool) -> tuple[bool, float]:
    """Case score = weighted mean of the scores of the checks that ran; the case passes when every check of
    nonzero weight passes, or when its threshold is met. A runner failure always fails the case. A judged check
    that was not run (``skipped``: the case was decided without it) counts in neither. Without any result (an
    unjudged case) the verdict is a fail with score 0: nothing was judged, so nothing passed."""
    results = [r for r in results if not r.skipped]
    if not results:
        return False, 0.0
    weighted, total = _weight_total(results)
    score = weighted / total
    if runner_failed:
        return False, score
    # A check of weight 0 is reported but cannot fail the case (promptfoo's "metric only" assertion).
    if all(r.passed for r in results if r.weight > 0):
        return True, score
    return (case.threshold is not None and score >= case.threshold), score


def not_run(check: Check) -> CheckResult:
    """The result of a judged check the case did not need: recorded, counted in neither verdict nor score."""
    return CheckResult(
        type=check.spec.label(),
        passed=False,
        score=0.0,
        evidence="not run: the case was decided without it",
        text=check.spec.text,
        weight=check.spec.weight,
        skipped=True,
    )
