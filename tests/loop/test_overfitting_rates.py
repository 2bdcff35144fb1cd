"""How often the paired overfitting rule flags a candidate, measured on simulated candidates (seeded).

Simulation model (tests/loop/simulated_gains.py has it in full): a task of n holdout cases beside 3.5 n dev
cases; each case has its own baseline graded score (case-to-case spread); the candidate's true gain differs from
case to case around a mean gain; baseline and candidate are measured once on the same cases (paired), with run
noise for a judged task and none for a deterministic one, and a case passes when its score reaches the pass mark.
A candidate that truly generalizes has the same mean gain on dev and holdout; one whose gain is on dev only has
none on the holdout. Three scenarios: ``binpack`` (the README's main job as measured), ``judged`` (a noisy task
graded by a judge) and ``neutral`` (no gain on average, scores moved case by case).

The rule must flag a candidate that truly generalizes at most 5% of the time at 4, 10 and 40 holdout cases, and
a candidate whose gain is on dev only at least 80% of the time from 10 holdout cases on.
benchmarks/overfitting_rule.py prints the same rates at more trials.
"""

from __future__ import annotations

import pytest

from tests.loop.simulated_gains import SCENARIOS, flag_rate

FALSE_POSITIVES = 0.05
POWER = 0.80


@pytest.mark.parametrize("holdout_cases", [4, 10, 40])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_candidate_that_truly_generalizes_is_flagged_at_most_5_percent_of_the_time(
    scenario: str, holdout_cases: int
) -> None:
    rate = flag_rate(SCENARIOS[scenario], holdout_cases, dev_only=False, trials=1000, seed=holdout_cases)
    assert rate <= FALSE_POSITIVES, f"{scenario}, {holdout_cases} holdout cases: flagged {rate:.1%}"


@pytest.mark.parametrize("holdout_cases", [10, 40])
@pytest.mark.parametrize("scenario", ["binpack", "judged"])
def test_a_candidate_whose_gain_is_on_dev_only_is_flagged_at_least_80_percent_of_the_time(
    scenario: str, holdout_cases: int
) -> None:
    rate = flag_rate(SCENARIOS[scenario], holdout_cases, dev_only=True, trials=400, seed=100 + holdout_cases)
    assert rate >= POWER, f"{scenario}, {holdout_cases} holdout cases: flagged {rate:.1%}"


def test_on_four_holdout_cases_a_gain_on_dev_only_is_caught_when_it_stands_clear_of_the_spread() -> None:
    """At 4 holdout cases the rule still sees the main job's kind of dev-only gain (large against its spread);
    a noisy judged one it often cannot tell from chance, which is the price of the 5% above."""
    clear = flag_rate(SCENARIOS["binpack"], 4, dev_only=True, trials=400, seed=7)
    noisy = flag_rate(SCENARIOS["judged"], 4, dev_only=True, trials=400, seed=7)
    assert clear >= POWER and FALSE_POSITIVES < noisy < POWER, (clear, noisy)


def test_the_seeds_fixed_gap_flags_the_main_jobs_kind_of_candidate_far_more_often() -> None:
    """Why the paired rule is the default: on 4 holdout cases a pass rate moves in steps of 0.25, and the seed's
    0.15 gap flags about a quarter of candidates that generalize as well as the README's main job did."""
    paired = flag_rate(SCENARIOS["binpack"], 4, dev_only=False, trials=400, seed=4)
    gap = flag_rate(SCENARIOS["binpack"], 4, dev_only=False, trials=400, seed=4, rule="gap")
    assert paired <= FALSE_POSITIVES < 0.2 <= gap, (paired, gap)
