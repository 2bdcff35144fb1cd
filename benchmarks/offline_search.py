"""Offline search without an LLM: the default proposer (structural edits alternated with Optuna tuning, no
repeated candidate) against the operators alone (`tuning: false`, today's `mutate` plus the no-repeat rule)
and against random search (operators and tuning chosen at random, random sampler), on four tasks:

(a) threshold: a config threshold (dev pass rate must reach 1.0);
(b) constants: a scoring curve with five constants;
(c) funsearch: online bin packing from FunSearch's best-fit skeleton, excess over the L1 bound measured on 20
    instances the run never saw (best fit: about 5.3%);
(d) binpack: the repository's example as the README runs it.

For each task, method and seed: the best dev score, the evaluations (candidates) to reach 95% of the best gain
any method found on that seed, the generations run, and for (c) the excess on unseen instances. Every run is a
real `assay evolve` (Python API) in a fresh git repository under a temp dir, with its wall clock raised to a
day, so the generation budget (the preset's, or 25 with --quick) bounds it, not the machine's load.

    python benchmarks/offline_search.py            # 5 seeds, the standard preset, full-size instances (hours)
    python benchmarks/offline_search.py --quick    # 2 seeds, 25 generations, smaller instances (minutes)
    python benchmarks/offline_search.py --tasks funsearch --methods default --seeds 1
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import offline_tasks

from assay.config import load_config
from assay.history.runfiles import RunFiles
from assay.loop.engine import Evolution
from assay.proposers import OfflineProposer, ProposerView
from assay.proposers.offline import FAMILIES
from assay.proposers.tune import TuneProposer

METHODS = ("default", "operators", "random")


class RandomSearch(OfflineProposer):
    """Operators or tuning chosen by a coin, tuning with Optuna's random sampler."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.tuner = TuneProposer(seed, sampler="random")

    def choose(self, view: ProposerView) -> str:
        return random.Random(f"{self.seed}:coin:{self.generation}").choice(FAMILIES)

    def turn(self, view: ProposerView) -> None:
        return None  # no inert guard turned round: that is the default proposer's own rule


@dataclass
class Result:
    task: str
    method: str
    seed: int
    scores: list[float]  # the best dev score after each generation (the baseline first)
    generations: int
    stop: str
    seconds: float
    excess: float | None = None


def evolve_settings(task: str, method: str, seed: int, quick: bool) -> str:
    lines = [f"seed: {seed}", "wall_clock_s: 86400"]  # the generation budget ends runs, not the machine's load
    if task != "binpack":
        lines.append("preset: standard")
    if method == "operators":
        lines.append("proposer: {type: mutate, tuning: false}")
    if quick:
        lines.append("max_generations: 25")
    return "\n".join(lines) + "\n"


def run_one(task: str, method: str, seed: int, quick: bool, workdir: Path) -> Result:
    root = workdir / f"{task}-{method}-{seed}"
    settings = evolve_settings(task, method, seed, quick)
    if task == "funsearch":
        offline_tasks.funsearch(root, settings, cases=12 if quick else 20, items=200 if quick else 500)
    elif task == "binpack":
        offline_tasks.binpack(root, settings)
    else:
        offline_tasks.BUILDERS[task](root, settings)
    config = load_config(root / "assay.yaml")
    proposer = RandomSearch(seed) if method == "random" else None
    started = time.monotonic()
    outcome = asyncio.run(Evolution(config, proposer=proposer).start())
    records = RunFiles(root / ".assay" / "runs" / outcome.run_id).read_candidates()
    scores, best = [], float("-inf")
    for record in records:
        if record.decision in ("baseline", "keep") and record.dev_score is not None:
            best = max(best, record.dev_score)
        scores.append(best)
    result = Result(
        task, method, seed, scores, outcome.generations, outcome.stop_reason, time.monotonic() - started
    )
    if task == "funsearch" and outcome.best.commit:
        source = _show(root, outcome.best.commit, "priority.py")
        result.excess = offline_tasks.excess(source, items=200 if quick else 500)
    return result


def _show(root: Path, commit: str, path: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", "show", f"{commit}:{path}"], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def to_reach(scores: list[float], target: float) -> int | None:
    """Generations (evaluated candidates) until the best score first reached ``target``."""
    return next((i for i, s in enumerate(scores) if s >= target - 1e-12), None)


def table(results: list[Result]) -> str:
    rows = [
        f"{'task':10s} {'method':9s} {'seeds':>5s} {'best dev score':>15s} {'gain':>8s} {'evals to 95%':>13s}"
        f" {'generations':>11s} {'unseen excess':>13s}",
        "-" * 90,
    ]
    for task in dict.fromkeys(r.task for r in results):
        for method in METHODS:
            mine = [r for r in results if r.task == task and r.method == method]
            if not mine:
                continue
            reach: list[int] = []
            for r in mine:
                same_seed = [o for o in results if o.task == task and o.seed == r.seed]
                base = r.scores[0]
                top = max(o.scores[-1] for o in same_seed)
                hit = to_reach(r.scores, base + 0.95 * (top - base)) if top > base else 0
                reach.append(hit if hit is not None else -1)
            shown = [str(x) if x >= 0 else "never" for x in reach]
            excess = [r.excess for r in mine if r.excess is not None]
            rows.append(
                f"{task:10s} {method:9s} {len(mine):5d} {statistics.mean(r.scores[-1] for r in mine):15.4f}"
                f" {statistics.mean(r.scores[-1] - r.scores[0] for r in mine):+8.4f} {'/'.join(shown):>13s}"
                f" {statistics.mean(r.generations for r in mine):11.1f}"
                f" {(f'{statistics.mean(excess):.2f}%' if excess else '-'):>13s}"
            )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tasks", nargs="+", default=list(offline_tasks.TASKS), choices=offline_tasks.TASKS)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--seeds", type=int, default=None, help="how many seeds (5, or 2 with --quick)")
    parser.add_argument(
        "--first-seed", type=int, default=0, help="the first seed (to split seeds over processes)"
    )
    args = parser.parse_args()
    seeds = args.seeds or (2 if args.quick else 5)
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="offline-search-") as tmp:
        for task in args.tasks:
            for seed in range(args.first_seed, args.first_seed + seeds):
                for method in args.methods:
                    result = run_one(task, method, seed, args.quick, Path(tmp))
                    results.append(result)
                    print(
                        f"{task} {method} seed {seed}: {result.scores[0]:.4f} -> {result.scores[-1]:.4f} in"
                        f" {result.generations} generations ({result.stop}; {result.seconds:.0f}s)"
                        + (f", unseen excess {result.excess:.2f}%" if result.excess is not None else ""),
                        flush=True,
                    )
    print()
    print("Offline search: best dev score, evaluations to reach 95% of the best gain found on each seed")
    print(table(results))


if __name__ == "__main__":
    main()
