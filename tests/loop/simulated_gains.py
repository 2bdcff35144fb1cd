"""Simulated candidates for measuring the overfitting rule (tests/loop/test_overfitting_rates.py and
benchmarks/overfitting_rule.py).

The model, one simulated candidate at a time:

- A task has ``n`` holdout cases and ``round(3.5 n)`` dev cases (the 70/20 split: 4 holdout beside 14 dev,
  10 beside 35, 40 beside 140).
- Cases differ: the baseline's graded score on case i is ``b_i = mean + spread * z_i`` (z_i standard normal).
- The candidate's true gain differs from case to case: ``g_i = gain + gain_spread * w_i`` on every case when
  it truly generalizes; when its gain is on dev only, the holdout cases get ``g_i = gain_spread * w_i``
  (no gain on average, the same case-to-case spread).
- Each side is measured once, with run noise: baseline ``b_i + noise * e_i``, candidate
  ``b_i + g_i + noise * e'_i`` (noise 0: a deterministic runner), clipped to [0, 1]. The two sides share the
  case, so they are paired by it.
- A case passes when its measured score is at least ``pass_mark``.
- The rule sees per-case gains, candidate minus baseline on the same case: the pass (-1, 0 or 1) and the score.

Scenarios: ``binpack`` is the README's main job as measured (examples/binpack: baseline per-case scores
0.946-0.969, a pass at 1/1.03 of the lower bound, cand-0003's per-case dev gains 0.010-0.031, mean 0.0156,
spread 0.006, a deterministic runner); ``judged`` a noisy task graded by a judge (scores spread widely across
cases, run noise 0.05, a gain of 0.15 with spread 0.1); ``neutral`` a change that moves scores case by case
without a gain on average.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from assay.config import OverfittingConfig
from assay.loop.overfitting import gap_verdict, paired_verdict

DEV_PER_HOLDOUT = 3.5  # the split's 70% dev / 20% holdout


@dataclass(frozen=True)
class Scenario:
    """A task and a candidate's true gain on it (see the module docstring)."""

    mean: float
    spread: float
    pass_mark: float
    gain: float
    gain_spread: float
    noise: float = 0.0


SCENARIOS = {
    "binpack": Scenario(mean=0.957, spread=0.007, pass_mark=1 / 1.03, gain=0.0156, gain_spread=0.006),
    "judged": Scenario(mean=0.55, spread=0.2, pass_mark=0.7, gain=0.15, gain_spread=0.1, noise=0.05),
    "neutral": Scenario(mean=0.6, spread=0.2, pass_mark=0.7, gain=0.0, gain_spread=0.05, noise=0.02),
}


@dataclass(frozen=True)
class Simulated:
    """One simulated candidate: its per-case gains over the baseline (rows: cases; columns: pass, score) on dev
    and on holdout, and its own pass rates there (what the seed's gap rule compares)."""

    dev: np.ndarray
    holdout: np.ndarray
    dev_pass_rate: float
    holdout_pass_rate: float


def simulate(
    scenario: Scenario, holdout_cases: int, *, dev_only: bool, rng: np.random.Generator
) -> Simulated:
    """One simulated candidate on a task of ``holdout_cases`` holdout cases (see the module docstring)."""
    dev_cases = round(DEV_PER_HOLDOUT * holdout_cases)
    cases = dev_cases + holdout_cases
    baseline = scenario.mean + scenario.spread * rng.standard_normal(cases)
    gain = scenario.gain + scenario.gain_spread * rng.standard_normal(cases)
    if dev_only:
        gain[dev_cases:] -= scenario.gain
    before = np.clip(baseline + scenario.noise * rng.standard_normal(cases), 0, 1)
    after = np.clip(baseline + gain + scenario.noise * rng.standard_normal(cases), 0, 1)
    passes = after >= scenario.pass_mark
    gains = np.column_stack([passes.astype(float) - (before >= scenario.pass_mark), after - before])
    return Simulated(
        gains[:dev_cases],
        gains[dev_cases:],
        float(passes[:dev_cases].mean()),
        float(passes[dev_cases:].mean()),
    )


def flag_rate(
    scenario: Scenario,
    holdout_cases: int,
    *,
    dev_only: bool,
    trials: int,
    seed: int,
    rule: Literal["paired", "gap"] = "paired",
) -> float:
    """The share of ``trials`` simulated candidates that ``rule`` flags overfitting at its default setting
    (paired: alpha 0.05; gap: 0.15)."""
    setting = OverfittingConfig(rule=rule)
    rng = np.random.default_rng(seed)
    flagged = 0
    for _ in range(trials):
        candidate = simulate(scenario, holdout_cases, dev_only=dev_only, rng=rng)
        if rule == "gap":
            verdict = gap_verdict(candidate.dev_pass_rate, candidate.holdout_pass_rate, setting.gap)
        else:
            verdict = paired_verdict(candidate.dev, candidate.holdout, setting.alpha)
        flagged += verdict.flagged
    return flagged / trials
