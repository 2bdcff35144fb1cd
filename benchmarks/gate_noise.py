"""Gate error rates under noise: keep-if-better, the strict ratchet and the noise-aware gate.

Model (the issue's 40-case simulation, as in benchmarks/ranking.py part c): 40 dev cases, 24 near-deterministic
(pass probability 0.98 or 0.02, each with chance 1/2) and 16 noisy (pass probability ~ U(0.2, 0.8)). A change
is null (nothing changes), a small gain (4 cases +0.4) or a medium gain (8 cases +0.4); the +0.4 (capped at 1)
goes to cases drawn among those that do not already pass ~always (probability < 0.9). The parent has r0 runs
per case from the baseline (default 3, not counted below); the candidate has one dev run per case.

Gates, judged on the same simulated runs:
- keep-if-better: candidate pass rate > parent pass rate, one run per case on each side.
- ratchet_strict: assay's strict rule (GATES "ratchet_strict") on one run per case, its noise rule re-running
  a lone regressed case 3 times (simulated).
- noisy: assay's noise-aware gate (GATES "noisy") through its public decide(), with the parent's r0 runs and a
  simulated sampler that draws new runs from the true pass probabilities.

Reported per gate x scenario: the share kept (null: false keeps; gains: gains kept), candidate runs per case
(the dev run included), extra parent runs per case, and extra runs per case in all (what the gate adds to the
evaluation budget). Targets: false keeps <= 5%, >= 80% of medium gains kept, <= 3 candidate runs per case.

Run: python benchmarks/gate_noise.py [--quick] [--trials 2000] [--jobs 2] [--seed 0] [--r0 3]
     [--option max_runs_per_case=6 ...]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from multiprocessing import Pool

import numpy as np

from assay.evaluation.evaluator import EvalResult
from assay.gates import GATES, GateInput
from assay.gates.paired import PairedGate
from assay.model import CaseResult, Output, Split
from assay.stats import SequentialOptions

N_CASES, N_DETERMINISTIC = 40, 24
SCENARIOS = {"null": 0, "small gain": 4, "medium gain": 8}
GATE_ROWS = ("keep-if-better", "ratchet_strict", "noisy")
_OUTPUT = Output.model_construct(duration_s=0.0, tokens_in=0, tokens_out=0, cost_usd=0.0)
_CASES = {
    (i, ok): CaseResult.model_construct(
        id=f"case-{i:02d}", split=Split.DEV, passed=ok, score=float(ok), output=_OUTPUT, checks=[]
    )
    for i in range(N_CASES)
    for ok in (False, True)
}


def _result(verdicts: np.ndarray) -> EvalResult:
    return EvalResult.model_construct(
        cases=[_CASES[i, bool(v)] for i, v in enumerate(verdicts)], static=None, duration_s=0.0
    )


def _probabilities(rng: np.random.Generator, gain_cases: int) -> tuple[np.ndarray, np.ndarray]:
    base = np.empty(N_CASES)
    base[:N_DETERMINISTIC] = np.where(rng.random(N_DETERMINISTIC) < 0.5, 0.98, 0.02)
    base[N_DETERMINISTIC:] = rng.uniform(0.2, 0.8, N_CASES - N_DETERMINISTIC)
    cand = base.copy()
    chosen = rng.choice(np.flatnonzero(base < 0.9), size=gain_cases, replace=False)
    cand[chosen] = np.minimum(1.0, cand[chosen] + 0.4)
    return base, cand


async def _trial(gain: int, seed: int, trial: int, r0: int, options: SequentialOptions) -> list[float]:
    """One simulated change judged by every gate: [kept, candidate runs, extra parent runs] per gate."""
    rng = np.random.default_rng([seed, gain, trial])
    base, cand = _probabilities(rng, gain)
    parent_runs = rng.random((N_CASES, r0)) < base[:, None]
    first = rng.random(N_CASES) < cand
    parent, candidate = _result(parent_runs[:, 0]), _result(first)
    out: list[float] = [float(first.sum() > parent_runs[:, 0].sum()), 1.0, 0.0]

    reruns = 0

    async def rerun(case_id: str, n: int) -> int:
        nonlocal reruns
        reruns += n
        return int(rng.binomial(n, cand[int(case_id[5:])]))

    strict = GATES.get("ratchet_strict")()
    decision = await strict.decide(
        GateInput(parent=parent, candidate=candidate, baseline=parent, rerun=rerun)
    )
    out += [float(decision.keep), 1 + reruns / N_CASES, 0.0]

    async def sample(case_id: str, side: str, n: int) -> list[float]:
        p = (base if side == "parent" else cand)[int(case_id[5:])]
        return [float(v) for v in rng.random(n) < p]

    known = {f"case-{i:02d}": [float(v) for v in parent_runs[i]] for i in range(N_CASES)}
    gate = PairedGate(options=options) if options != SequentialOptions() else GATES.get("noisy")()
    data = GateInput(parent=parent, candidate=candidate, baseline=parent, sampler=sample, parent_runs=known)
    decision = await gate.decide(data)
    numbers = decision.dimensions["progress"].numbers
    out += [
        float(decision.keep),
        1 + numbers["extra_candidate_runs"] / N_CASES,
        numbers["extra_parent_runs"] / N_CASES,
    ]
    return out


def run_chunk(task: tuple[int, int, int, int, int, SequentialOptions]) -> np.ndarray:
    gain, seed, start, stop, r0, options = task

    async def chunk() -> list[list[float]]:
        return [await _trial(gain, seed, t, r0, options) for t in range(start, stop)]

    return np.asarray(asyncio.run(chunk()))


def _options(pairs: Sequence[str]) -> SequentialOptions:
    defaults = SequentialOptions()
    changes: dict[str, object] = {}
    for pair in pairs:
        name, _, text = pair.partition("=")
        current = getattr(defaults, name)
        if isinstance(current, tuple):
            changes[name] = tuple(int(v) for v in text.split(",") if v)
        elif name == "futility_z":
            changes[name] = None if text in ("", "none") else float(text)
        elif isinstance(current, bool):
            changes[name] = text.lower() in ("1", "true", "yes")
        else:
            changes[name] = type(current)(text)
    return replace(defaults, **changes)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 trials per row (smoke run)")
    parser.add_argument("--trials", type=int, help="trials per row (default 2000; quick 300)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--r0", type=int, default=3, help="parent runs per case from the baseline")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a SequentialOptions field of the noisy gate, e.g. max_runs_per_case=8 or looks=1,3,6 (repeatable)",
    )
    args = parser.parse_args(argv)
    trials = args.trials or (300 if args.quick else 2000)
    options = _options(args.option)
    start = time.perf_counter()
    step = max(1, trials // (4 * args.jobs))
    tasks = [
        (gain, args.seed, lo, min(trials, lo + step), args.r0, options)
        for gain in SCENARIOS.values()
        for lo in range(0, trials, step)
    ]
    if args.jobs > 1:
        with Pool(args.jobs) as pool:
            chunks = pool.map(run_chunk, tasks)
    else:
        chunks = list(map(run_chunk, tasks))
    by_gain = {
        gain: np.concatenate([c for t, c in zip(tasks, chunks, strict=True) if t[0] == gain])
        for gain in SCENARIOS.values()
    }

    print(
        f"Gate error rates: {N_CASES} cases ({N_DETERMINISTIC} near-deterministic, "
        f"{N_CASES - N_DETERMINISTIC} noisy), parent r0={args.r0}, {trials} trials per row, seed {args.seed}"
    )
    print(f"noisy gate options: {options}")
    headers = ["gate", "scenario", "kept", "cand runs/case", "extra parent/case", "extra runs/case"]
    rows = []
    for g, name in enumerate(GATE_ROWS):
        for scenario, gain in SCENARIOS.items():
            data = by_gain[gain][:, 3 * g : 3 * g + 3].mean(axis=0)
            kept, cand_runs, parent_extra = (float(x) for x in data)
            rows.append(
                [
                    name,
                    scenario,
                    f"{100 * kept:.1f}%",
                    f"{cand_runs:.2f}",
                    f"{parent_extra:.2f}",
                    f"{cand_runs - 1 + parent_extra:.2f}",
                ]
            )
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    noisy = {s: by_gain[gain][:, 6:9].mean(axis=0) for s, gain in SCENARIOS.items()}
    false_keep, medium = noisy["null"][0], noisy["medium gain"][0]
    runs = max(float(v[1]) for v in noisy.values())
    met = false_keep <= 0.05 and medium >= 0.80 and runs <= 3.0
    print(
        f"target (noisy): false keeps {100 * false_keep:.1f}% <= 5%, medium gains kept {100 * medium:.1f}% "
        f">= 80%, candidate runs per case (worst row) {runs:.2f} <= 3: {'MET' if met else 'NOT MET'}"
    )
    print(f"command: python {' '.join(sys.argv)}  ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
