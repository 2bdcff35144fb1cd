"""The default gate: an AND of structure, progress, regression, cost and safety (the self-evolution gate).

- structure: the candidate has no critical L1 finding.
- progress: a higher dev pass rate than the parent's, or the same pass rate and a mean score higher by at least
  the effective ``min_delta``; a higher pass rate does not buy a lower mean score (more than ``score_tolerance``
  below the parent's, by default the effective ``min_delta`` itself: a trade-off, not a gain; on a graded task,
  one case crossing its pass mark while the others lose more than that is how a search overfits its few dev
  cases). A rise under the threshold is a tie, and a tie is kept only with a recorded benefit (fewer tokens per
  case, or a smaller artifact: the simplicity criterion). A rise under the threshold is a gain after all when it
  is borne out case by case: among the cases whose graded score changed, a one-sided sign test finds more better
  than chance would (p ≤ 0.05: at least 5 better and none worse), so a small step every case agrees on is not
  lost to a threshold meant for noise in the mean.
- regression: no dev case went PASS→FAIL. If exactly one regressed while others improved, it is re-run
  3 times and counted as noise when 2 of 3 runs pass.
- cost: tokens and time per case at most ``cost_factor`` × the baseline's. Time is CPU time (user + system of
  the case's process and the children it waited for) when every case of both the candidate and the baseline has
  it: load on the machine stretches wall time, not CPU time, so a baseline timed minutes earlier on a quieter
  machine stays comparable. Otherwise (the ``llm`` and ``agent`` runners, whose time is mostly waiting for a
  model; results recorded before CPU time was) it is wall time. Time counts as too slow only when the cases
  themselves say so: the mean is above the limit and so is the median of each case's time over its own
  baseline time (one case that hangs until its timeout raises the mean but not that median; the hung case is
  the regression rule's to judge; with wall time, so does a burst of load).
- safety: no critical finding and no more warnings than the parent.

``min_delta`` (set by the preset: quick 0.01, standard 0.005, deep 0.002) relaxes as seed 000's trend-aware gate
(:mod:`assay.gates.relax`): halved after 3 flat generations (the best's dev mean score spanning less than
``min_delta``) and after 3 discards in a row, down to min_delta / 8, back on a keep; a ``trend`` dimension
(informational) carries the numbers. Only the mean score answers to it: a newly passing case is a step a
threshold on a continuous score is not meant to filter. ``min_delta`` 0 (the default of a gate built by hand)
takes any rise, as the ratchet did before it had a threshold.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Literal

from assay.evaluation.evaluator import EvalResult
from assay.gates.backpressure import EPSILON, check_options
from assay.gates.base import GATES, Dimension, Gate, GateDecision, GateInput, scope_numbers
from assay.gates.relax import Relaxation
from assay.model import CaseResult
from assay.static.report import StaticReport

TIE_BENEFIT = 0.05  # a tie is kept only when cost, time or size drop by at least this fraction


def _tokens_per_case(result: EvalResult) -> float:
    return result.tokens / max(1, len(result.cases))


TimeBasis = Literal["cpu", "wall"]


def _clock(*results: EvalResult) -> TimeBasis:
    """``cpu`` when every case of ``results`` has its CPU time, else ``wall``: the time both sides have."""
    cases = [c for r in results for c in r.cases]
    return "cpu" if cases and all(c.output.cpu_s is not None for c in cases) else "wall"


def _seconds(case: CaseResult, clock: TimeBasis) -> float:
    return (case.output.cpu_s or 0.0) if clock == "cpu" else case.output.duration_s


def _time_per_case(result: EvalResult, clock: TimeBasis) -> float:
    return sum(_seconds(c, clock) for c in result.cases) / max(1, len(result.cases))


SIGN_ALPHA = 0.05  # a one-sided sign test at this level makes a consistent small rise a gain
PAIRED_MIN = 3  # fewer cases run by both than this: the means alone decide


def _typical_slowdown(baseline: EvalResult, candidate: EvalResult, clock: TimeBasis) -> float | None:
    """The median, over the cases both ran, of the candidate's time over the baseline's (None when too few
    cases were run by both)."""
    before = {c.id: _seconds(c, clock) for c in baseline.cases if _seconds(c, clock) > 0}
    ratios = [_seconds(c, clock) / before[c.id] for c in candidate.cases if c.id in before]
    return statistics.median(ratios) if len(ratios) >= PAIRED_MIN else None


def _consistent_gain(old: EvalResult, new: EvalResult) -> dict[str, float] | None:
    """A rise in graded scores too small for the threshold but borne out case by case: per case run by both,
    the candidate's score against the parent's, and a one-sided sign test over the cases whose score changed
    (``p`` ≤ :data:`SIGN_ALPHA`: at least 5 better and none worse, 8 of 9, 9 of 11, ...). None when it is not."""
    before = {c.id: c.score for c in old.judged}
    pairs = [(before[c.id], c.score) for c in new.judged if c.id in before]
    better = sum(1 for a, b in pairs if b > a + EPSILON)
    worse = sum(1 for a, b in pairs if b < a - EPSILON)
    changed = better + worse
    if not better or better <= worse:
        return None
    p = sum(math.comb(changed, k) for k in range(better, changed + 1)) / 2**changed
    if p > SIGN_ALPHA:
        return None
    return {"cases_better": float(better), "cases_changed": float(changed), "sign_p": p}


def _findings(static: StaticReport | None) -> tuple[int, int]:
    if static is None:
        return 0, 0
    return len(static.critical), len(static.warnings)


@GATES.register("ratchet")
class RatchetGate(Gate):
    """Keep only a candidate that is better on every dimension that matters (see module docstring)."""

    name = "ratchet"

    def __init__(
        self,
        *,
        cost_factor: float = 2.0,
        noise_reruns: int = 3,
        noise_passes: int = 2,
        score_tolerance: float | None = None,
        min_delta: float = 0.0,
        relax_factor: float = 0.5,
    ) -> None:
        check_options(min_delta, 0, relax_factor)
        self.relaxation = Relaxation(min_delta, relax_factor)
        self.cost_factor = cost_factor
        self.score_tolerance = score_tolerance
        self.noise_reruns = noise_reruns
        self.noise_passes = noise_passes

    def snapshot(self) -> dict[str, Any]:
        return self.relaxation.snapshot() if self.relaxation.min_delta else {}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.relaxation.restore(snapshot)

    async def decide(self, data: GateInput) -> GateDecision:
        trend = self.relaxation.relax() if self.relaxation.min_delta else None
        dims = {
            "structure": self._structure(data),
            "progress": self._progress(data, self.relaxation.threshold),
            "regression": await self._regression(data),
            "cost": self._cost(data),
            "safety": self._safety(data),
        }
        keep = all(d.passed for d in dims.values())
        action = "keep" if keep else "discard"
        if trend is not None:
            dims["trend"] = trend
            self.relaxation.record(action, data.parent.mean_score, data.candidate.mean_score)
        return GateDecision(keep=keep, dimensions=dims, action=action)

    def _structure(self, data: GateInput) -> Dimension:
        critical, _ = _findings(data.candidate_static)
        return Dimension(
            passed=critical == 0, detail=f"{critical} critical L1 findings", numbers={"critical": critical}
        )

    def _progress(self, data: GateInput, threshold: float) -> Dimension:
        old, new = data.for_progress()
        numbers: dict[str, float | str | None] = {
            "parent_pass_rate": old.pass_rate,
            "pass_rate": new.pass_rate,
            "parent_score": old.mean_score,
            "score": new.mean_score,
        }
        if self.relaxation.min_delta:
            numbers["threshold"] = threshold
        numbers.update(scope_numbers(*data.progress_counts()))
        scope = data.progress_scope()
        rate = f"pass rate {old.pass_rate:.3f} -> {new.pass_rate:.3f}"
        score = f"score {old.mean_score:.3f} -> {new.mean_score:.3f}"
        gain = new.mean_score - old.mean_score
        tolerance = threshold if self.score_tolerance is None else self.score_tolerance
        if new.pass_rate > old.pass_rate and new.mean_score < old.mean_score - tolerance - EPSILON:
            detail = f"a trade-off, not a gain: {rate} but {score}{scope}"
            return Dimension(passed=False, detail=detail, numbers=numbers)
        if new.pass_rate > old.pass_rate or (
            new.pass_rate == old.pass_rate and gain > 0 and gain >= threshold - EPSILON
        ):
            return Dimension(passed=True, detail=f"{rate}, {score}{scope}", numbers=numbers)
        if new.pass_rate < old.pass_rate or gain < 0:
            return Dimension(passed=False, detail=f"worse: {rate}, {score}{scope}", numbers=numbers)
        consistent = _consistent_gain(old, new) if gain > 0 else None
        if consistent is not None:
            numbers.update(consistent)
            better, changed, p = consistent["cases_better"], consistent["cases_changed"], consistent["sign_p"]
            detail = (
                f"{rate}, {score}{scope}: under the threshold {threshold:.4f}, but {better:.0f} of {changed:.0f} "
                f"changed cases scored higher (sign test p={p:.3f})"
            )
            return Dimension(passed=True, detail=detail, numbers=numbers)
        under = f"score {gain:+.4f} under the threshold {threshold:.4f}, a tie" if gain else ""
        benefit = self._tie_benefit(data, numbers)
        numbers["benefit"] = benefit
        if benefit:
            tie = under or "tie on score"
            return Dimension(passed=True, detail=f"{tie}{scope} with a benefit: {benefit}", numbers=numbers)
        tie = under or "tie on pass rate and score"
        return Dimension(passed=False, detail=f"no improvement ({tie}, no benefit){scope}", numbers=numbers)

    def _tie_benefit(self, data: GateInput, numbers: dict[str, float | str | None]) -> str | None:
        """The benefit that breaks a tie, in words (None: none), its measure and values added to ``numbers``."""
        # Only deterministic benefits count: wall time per case is too noisy to break a tie.
        old_tokens = _tokens_per_case(data.parent)
        new_tokens = _tokens_per_case(data.candidate)
        if old_tokens and new_tokens <= old_tokens * (1 - TIE_BENEFIT):
            numbers.update(benefit_of="tokens", benefit_before=old_tokens, benefit_after=new_tokens)
            return f"tokens per case {old_tokens:.0f} -> {new_tokens:.0f}"
        if data.parent_size and data.candidate_size <= data.parent_size * (1 - TIE_BENEFIT):
            numbers.update(
                benefit_of="content" if data.size_unit != "bytes" else "size",
                benefit_before=data.parent_size,
                benefit_after=data.candidate_size,
            )
            return f"artifact size {data.parent_size} -> {data.candidate_size} {data.size_unit}"
        return None

    async def _regression(self, data: GateInput) -> Dimension:
        before = {c.id: c.passed for c in data.parent.judged}
        after = {c.id: c.passed for c in data.candidate.judged}
        regressed = sorted(cid for cid, ok in after.items() if before.get(cid) and not ok)
        improved = sorted(cid for cid, ok in after.items() if ok and before.get(cid) is False)
        numbers: dict[str, object] = {"regressed": regressed, "improved": improved}
        if not regressed:
            return Dimension(passed=True, detail="no case went PASS->FAIL", numbers=numbers)
        if len(regressed) == 1 and improved and data.rerun is not None:
            passes = await data.rerun(regressed[0], self.noise_reruns)
            numbers.update(rerun_passes=passes, reruns=self.noise_reruns)
            if passes >= self.noise_passes:
                return Dimension(
                    passed=True,
                    detail=f"{regressed[0]} regressed once but passed {passes}/"
                    f"{self.noise_reruns} reruns: noise",
                    numbers=numbers,
                )
        return Dimension(
            passed=False,
            detail=f"{len(regressed)} cases went PASS->FAIL: {', '.join(regressed[:5])}",
            numbers=numbers,
        )

    def _cost(self, data: GateInput) -> Dimension:
        base_tokens, tokens = _tokens_per_case(data.baseline), _tokens_per_case(data.candidate)
        clock = _clock(data.baseline, data.candidate)
        base_time = _time_per_case(data.baseline, clock)
        seconds = _time_per_case(data.candidate, clock)
        numbers: dict[str, float | str | None] = {
            "cost_factor": self.cost_factor,
            "tokens_per_case": tokens,
            "baseline_tokens_per_case": base_tokens,
            "seconds_per_case": seconds,
            "baseline_seconds_per_case": base_time,
            "clock": clock,
        }
        too_many_tokens = base_tokens > 0 and tokens > self.cost_factor * base_tokens
        # Times below 50 ms are dominated by process start-up noise; they are not judged.
        too_slow = base_time > 0.05 and seconds > self.cost_factor * base_time
        if too_slow:
            typical = _typical_slowdown(data.baseline, data.candidate, clock)
            numbers["median_time_ratio"] = typical
            too_slow = typical is None or typical > self.cost_factor
        if too_many_tokens or too_slow:
            what = "tokens" if too_many_tokens else "time"
            numbers["over"] = what
            measure = "CPU time" if what == "time" and clock == "cpu" else what
            return Dimension(
                passed=False,
                detail=f"{measure} per case above {self.cost_factor:g}x the baseline",
                numbers=numbers,
            )
        return Dimension(passed=True, detail="within the cost budget", numbers=numbers)

    def _safety(self, data: GateInput) -> Dimension:
        critical, warnings = _findings(data.candidate_static)
        _, parent_warnings = _findings(data.parent_static)
        numbers = {"critical": critical, "warnings": warnings, "parent_warnings": parent_warnings}
        if critical:
            return Dimension(
                passed=False, detail=f"{critical} critical security/structure findings", numbers=numbers
            )
        if warnings > parent_warnings:
            return Dimension(
                passed=False, detail=f"warnings increased {parent_warnings} -> {warnings}", numbers=numbers
            )
        return Dimension(passed=True, detail="no new findings", numbers=numbers)
