"""Search efficiency on the offline example of ``assay evolve`` (examples/binpack): greedy, ranked and dgm parent
selection, the same mutate proposer, the same seeds.

For each strategy and seed the example is copied into a fresh git repository, ``assay init`` measures the
baseline, and the loop runs ``--generations`` generations with no early stop (the example's 180 s wall clock is
raised to a day: the generation budget, not the machine's load, ends every run). Reported per strategy: how many
candidates were evaluated before the first one whose dev score reached ``--target`` (a miss counts as the
whole budget, so the mean is a lower bound when some runs miss), the share of runs that reached it, and the best
dev and holdout scores at the end. Each candidate evaluation is one run of every dev case, so "candidates" is
the evaluation count of the SIFT paper's comparison.

Run: python benchmarks/search_example.py [--seeds 3] [--generations 25] [--target 0.975]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from assay.aio import run_sync
from assay.config import load_config
from assay.history.runfiles import RunFiles
from assay.loop.engine import Evolution

EXAMPLE = Path(__file__).parents[1] / "examples" / "binpack"
SELECTORS = ("greedy", "ranked", "dgm")


def _project(root: Path, strategy: str, seed: int, generations: int) -> Path:
    shutil.copytree(EXAMPLE, root)
    config = yaml.safe_load((root / "assay.yaml").read_text())
    config["evolve"].update(
        search=strategy, seed=seed, max_generations=generations, target_pass_rate=None, plateau=None
    )
    config["evolve"]["wall_clock_s"] = 86400  # the generation budget bounds the run, not the preset's 180 s
    config["evolve"]["tournament"] = {"rating": "bradley_terry", "opponents": "adaptive", "k": 5}
    (root / "assay.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (root / ".gitignore").write_text(".assay/\n__pycache__/\n")
    env = {**os.environ, "COLUMNS": "200"}
    for args in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"]):
        subprocess.run(args, cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "start"], cwd=root, check=True
    )
    subprocess.run(
        [sys.executable, "-m", "assay", "init"], cwd=root, check=True, env=env, capture_output=True
    )
    return root


def run_one(strategy: str, seed: int, generations: int, target: float) -> dict[str, float | None]:
    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp) / "p", strategy, seed, generations)
        outcome = run_sync(Evolution(load_config(root / "assay.yaml"), max_generations=generations).start())
        records = RunFiles(root / ".assay" / "runs" / outcome.run_id).read_candidates()
        evaluated = [r for r in records[1:] if r.dev_score is not None]
        hit = next((i for i, r in enumerate(evaluated, 1) if (r.dev_score or 0) >= target - 1e-12), None)
        return {
            "to_target": hit,
            "evaluated": len(evaluated),
            "best_dev": outcome.best.dev_score,
            "best_holdout": outcome.best.holdout_score,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--generations", type=int, default=25)
    parser.add_argument("--target", type=float, default=0.975)
    args = parser.parse_args(argv)
    print(
        f"binpack example, {args.seeds} seeds, {args.generations} generations, target dev score {args.target}",
        flush=True,
    )
    header = f"{'strategy':8s} {'candidates to target':>21s} {'reached':>8s} {'best dev':>9s} {'holdout':>8s} {'time':>7s}"
    print(header)
    for strategy in SELECTORS:
        start = time.perf_counter()
        rows = [run_one(strategy, seed, args.generations, args.target) for seed in range(args.seeds)]
        to_target = [r["to_target"] or args.generations for r in rows]
        reached = sum(r["to_target"] is not None for r in rows) / len(rows)
        dev = statistics.mean(r["best_dev"] or 0.0 for r in rows)
        holdout = [r["best_holdout"] for r in rows if r["best_holdout"] is not None]
        print(
            f"{strategy:8s} {statistics.mean(to_target):21.1f} {reached:8.0%} {dev:9.4f}"
            f" {statistics.mean(holdout) if holdout else float('nan'):8.4f} {time.perf_counter() - start:6.0f}s"
            f"   per seed: {[r['to_target'] for r in rows]}, best dev {[round(r['best_dev'] or 0, 4) for r in rows]}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
