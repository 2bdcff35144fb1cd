"""How check results combine into a case verdict."""

from __future__ import annotations

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


def combine(case: Case, results: list[CheckResult], runner_failed: bool) -> tuple[bool, float]:
    """Case score = weighted mean of check scores; the case passes when every check of nonzero weight
    passes, or when its threshold is met. A runner failure always fails the case. Without any result (an unjudged case) the
    verdict is a fail with score 0: nothing was judged, so nothing passed."""
    if not results:
        return False, 0.0
    total_weight = sum(r.weight for r in results)
    if total_weight > 0:
        score = sum(r.score * r.weight for r in results) / total_weight
    else:
        score = sum(r.score for r in results) / len(results)
    if runner_failed:
        return False, score
    # A check of weight 0 is reported but cannot fail the case (promptfoo's "metric only" assertion).
    if all(r.passed for r in results if r.weight > 0):
        return True, score
    return (case.threshold is not None and score >= case.threshold), score
