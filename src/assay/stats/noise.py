"""Noise at the baseline: per-case pass probability, flakiness and determinism from repeated runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

PASS_SCORE = 0.5  # a run scored at least this counts as a pass


@dataclass(frozen=True)
class CaseNoise:
    """One case over its repeated runs. ``flakiness`` is the share of runs that disagree with the case's
    majority verdict (0 for a deterministic case, 0.5 at most)."""

    runs: int
    pass_probability: float
    flakiness: float
    deterministic: bool


@dataclass(frozen=True)
class NoiseEstimate:
    """All cases' noise; ``deterministic`` when every case's runs agreed (then one run per case suffices)."""

    cases: dict[str, CaseNoise] = field(default_factory=dict)

    @property
    def deterministic(self) -> bool:
        return all(c.deterministic for c in self.cases.values())

    @property
    def flaky(self) -> list[str]:
        """Cases whose runs disagreed, most flaky first."""
        noisy = [cid for cid, c in self.cases.items() if not c.deterministic]
        return sorted(noisy, key=lambda cid: (-self.cases[cid].flakiness, cid))

    def summary(self) -> str:
        """One line for plan.md and the status output."""
        runs = max((c.runs for c in self.cases.values()), default=0)
        if runs <= 1:
            return f"one run per case ({len(self.cases)} cases): taken as deterministic, not measured"
        if self.deterministic:
            return f"deterministic: all {len(self.cases)} cases agreed over {runs} runs each"
        shown = ", ".join(self.flaky[:10]) + (" ..." if len(self.flaky) > 10 else "")
        return f"noisy: {len(self.flaky)} of {len(self.cases)} cases flaky over {runs} runs: {shown}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form for logs."""
        return {
            "deterministic": self.deterministic,
            "flaky": self.flaky,
            "cases": {
                cid: {
                    "runs": c.runs,
                    "pass_probability": c.pass_probability,
                    "flakiness": c.flakiness,
                    "deterministic": c.deterministic,
                }
                for cid, c in sorted(self.cases.items())
            },
        }


def estimate_noise(runs: Mapping[str, Sequence[float]]) -> NoiseEstimate:
    """Per-case estimates from each case's run scores (1 pass, 0 fail, or a score in [0, 1]).

    A case is deterministic when all its runs gave the same score; a single run counts as deterministic."""
    cases: dict[str, CaseNoise] = {}
    for cid, scores in runs.items():
        if not scores:
            continue
        passes = sum(s >= PASS_SCORE for s in scores)
        cases[cid] = CaseNoise(
            runs=len(scores),
            pass_probability=passes / len(scores),
            flakiness=min(passes, len(scores) - passes) / len(scores),
            deterministic=all(s == scores[0] for s in scores),
        )
    return NoiseEstimate(cases)


def default_repeats(*, llm_runner: bool, judged_checks: bool, repeats: int = 3) -> int:
    """Runs per case at the baseline: ``repeats`` (default 3) for LLM or agent runners or judged checks,
    1 for deterministic runners."""
    return repeats if llm_runner or judged_checks else 1
