"""How often the overfitting rule flags a candidate: the paired rule (assay's default) beside the seed's fixed
0.15 gap between the pass rates (``tiers.overfitting.rule: gap``), on simulated candidates that truly
generalize and on ones whose gain is on dev only, at 4, 10 and 40 holdout cases.

Model: tests/loop/simulated_gains.py (per-case graded scores with case-to-case spread, a pass at a score
threshold, baseline and candidate measured on the same cases; scenarios ``binpack``, ``judged``, ``neutral``).
tests/loop/test_overfitting_rates.py asserts the targets at fewer trials: at most 5% of candidates that
generalize flagged at every case count, at least 80% of dev-only gains flagged from 10 holdout cases on.

Run: python benchmarks/overfitting_rule.py [--trials 4000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.loop.simulated_gains import SCENARIOS, flag_rate

HOLDOUT_CASES = (4, 10, 40)
RULES = ("paired", "gap")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Flag rates of the overfitting rules on simulated candidates."
    )
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(
        "flagged overfitting: a candidate that generalizes (false positives) | whose gain is on dev only (power)"
    )
    print(
        f"{'scenario':10s} {'holdout':>7s} "
        + " ".join(f"{rule + ' gen.':>11s} {rule + ' dev':>10s}" for rule in RULES)
    )
    for name, scenario in SCENARIOS.items():
        for cases in HOLDOUT_CASES:
            cells = []
            for rule in RULES:
                for dev_only in (False, True):
                    if dev_only and not scenario.gain:
                        cells.append(f"{'-':>10s}")  # no gain: nothing to be on dev only
                        continue
                    rate = flag_rate(
                        scenario, cases, dev_only=dev_only, trials=args.trials, seed=args.seed, rule=rule
                    )
                    cells.append(f"{rate:{10 if dev_only else 11}.1%}")
            print(f"{name:10s} {cases:7d} " + " ".join(cells))
    print(
        f"({args.trials} simulated candidates per cell, seed {args.seed}, {time.perf_counter() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
