"""SIFT's judge-first ranking against plain search, when evaluations are costly and the judge is right with a
probability you set.

The task is the offline bin-packing example with many more cases (``--cases`` generated instances, 70% of them
dev: one evaluation of a candidate is that many case runs). A scripted pairwise judge knows each candidate's true
quality (its mean score over every instance, computed in-process, free) and answers correctly with probability
``--accuracy``, else the opposite; every judge call counts as one case run. Three searches, the same mutate
proposer and seeds:

- greedy: every proposal is evaluated; the tournament uses per-case scores (no judge calls);
- ranked: SIFT's parent sampling, every proposal evaluated, the same free tournament;
- judge-first ranked: ``evolve.screening: judge`` — each new candidate is first judged against its parent and the
  ``--k`` best-rated candidates on its files; one ranked below its parent is never evaluated.

Every run gets the same spend, ``--budget`` case runs + judge calls (a screened-out proposal costs its judge
calls only, so judge-first search makes more proposals for the same spend: SIFT's point). The runs are bound by
that budget, not by time: the example's 180 s wall clock is raised to ``--wall-clock`` (a day), so a busy machine
only makes the benchmark slower, and any run that stops for another reason is listed. Reported per search: the
cost until the best dev score reaches ``--target`` (a run that misses counts its whole cost and is marked), and
the cost per success — every run's cost over the runs that reached the target, what the target costs when a
missed run is restarted — with its ratio to greedy (a missed run can stop early and cheaply, so the plain mean
would flatter a search that misses). A search that never reached the target has no cost per success, only a
lower bound (more than all its runs spent: ``>12500``), and its ratio is a bound too (``>1.80``, ``<0.40``) or
``n/a`` when neither search reached it.

Run: python benchmarks/sift_screening.py [--seeds 5] [--cases 80] [--budget 2500] [--accuracy 0.8]
     [--wall-clock 86400]
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

import yaml

import assay
from assay.history.runfiles import RunFiles
from assay.loop.events import typed_events
from assay.loop.state import RunView
from assay.tournament import Contestant, PairVerdict, PairwiseJudge

EXAMPLE = Path(__file__).parents[1] / "examples" / "binpack"
sys.path.insert(0, str(EXAMPLE))
import harness  # noqa: E402 - the example's own instances and packer, with each candidate's priority

ITEMS = 120


def quality(priority_source: str, seeds: list[int]) -> float:
    """The true mean score (lower bound / bins) of a priority function over the instances; 0 if it breaks."""
    space: dict[str, Any] = {}
    try:
        exec(compile(priority_source, "priority.py", "exec"), space)  # the benchmark's own candidates
        priority = space["priority"]
        total = 0.0
        for seed in seeds:
            items = harness.instance(seed, ITEMS)
            total += math.ceil(sum(items) - 1e-9) / harness.pack(items, priority)
        return total / len(seeds)
    except Exception:
        return 0.0


class ScriptedJudge(PairwiseJudge):
    """Right with probability ``accuracy`` about which candidate's files are better; one call per comparison."""

    name = "scripted"

    def __init__(self, accuracy: float, seeds: list[int], seed: int) -> None:
        self.accuracy, self.seeds, self.seed = accuracy, seeds, seed
        self._known: dict[str, float] = {}

    def _quality(self, who: Contestant) -> float:
        source = who.files.get("priority.py", "")
        if source not in self._known:
            self._known[source] = quality(source, self.seeds)
        return self._known[source]

    async def compare(self, a: Contestant, b: Contestant, *, round: int = 0) -> PairVerdict:
        qa, qb = self._quality(a), self._quality(b)
        truth = None if abs(qa - qb) < 1e-12 else a.id if qa > qb else b.id
        right = random.Random(f"{self.seed}|{a.id}|{b.id}|{round}").random() < self.accuracy
        winner = None if truth is None else truth if right else b.id if truth == a.id else a.id
        return PairVerdict(winner, f"scripted: {winner or 'tie'}", [winner or "tie"], calls=1)


class Target(assay.StopRule):
    def __init__(self, score: float) -> None:
        self.score = score

    def check(self, run: RunView) -> str | None:
        best = (run.best.dev_score or 0.0) if run.best else 0.0
        return "target reached" if best >= self.score else None


class Budget(assay.StopRule):
    """Stops once case runs plus judge calls reach ``limit``: every search gets the same spend."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def check(self, run: RunView) -> str | None:
        spent = run.spent.case_runs + run.spent.judge_calls
        return "budget spent" if spent >= self.limit else None


def project(
    root: Path, cases: int, search: str, screening: bool, k: int, seed: int, wall_clock: float
) -> Path:
    shutil.copytree(EXAMPLE, root)
    (root / "cases.yaml").write_text(
        "cases:\n" + "".join(f"  - {{id: inst-{i:03d}, vars: {{seed: {5000 + i}}}}}\n" for i in range(cases))
    )
    config = yaml.safe_load((root / "assay.yaml").read_text())
    # This interpreter, not `python` from PATH: a version manager's shim costs more than the case itself.
    config["runner"]["command"] = f"{sys.executable} harness.py {{vars.seed}} {ITEMS}"
    evolve = config["evolve"]
    evolve.update(search=search, seed=seed, target_pass_rate=None, stop_on_oscillation=False, plateau=1000)
    evolve["wall_clock_s"] = wall_clock  # the budget bounds the run, not the preset's 180 s
    evolve["discards_per_layer"] = 1000
    evolve["layers"] = [1, 2]
    if screening:
        evolve["screening"] = "judge"
        # The judge ranks new candidates before evaluation; no further matches after it.
        evolve["tournament"] = {
            "opponents": "top_k",
            "k": k,
            "matches_per_generation": 0,
            "rating": "bradley_terry",
        }
    (root / "assay.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (root / ".gitignore").write_text(".assay/\n__pycache__/\n")
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "start"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


class Result(NamedTuple):
    cost: int  # case runs + judge calls spent
    reached: bool
    best: float
    stop: str


def run(kind: str, seed: int, args: argparse.Namespace, work: Path) -> Result:
    search = "greedy" if kind == "greedy" else "ranked"
    screening = kind == "judge-first"
    root = project(work / f"{kind}-{seed}", args.cases, search, screening, args.k, seed, args.wall_clock)
    seeds = [5000 + i for i in range(args.cases)]
    judge = ScriptedJudge(args.accuracy, seeds, seed) if screening else None
    rules = [Target(args.target), Budget(args.budget)]
    outcome = assay.evolve(
        root / "assay.yaml", max_generations=args.generations, stop_rules=rules, judge=judge
    )
    logged = typed_events(RunFiles(root / ".assay" / "runs" / outcome.run_id).read_events())
    cost = sum(e.spent.case_runs + e.spent.judge_calls for e in logged)
    reached = outcome.stop_reason == "target reached"
    return Result(cost, reached, outcome.best.dev_score or 0.0, outcome.stop_reason)


def per_success(results: list[Result]) -> float:
    """Case runs spent per run that reached the target (all runs' cost over the successes: what reaching the
    target costs when a missed run is restarted); infinite when none reached it."""
    reached = sum(r.reached for r in results)
    return sum(r.cost for r in results) / reached if reached else math.inf


def per_success_text(results: list[Result]) -> str:
    """The cost per success, or its lower bound when no run reached the target: more than every run spent."""
    cost = per_success(results)
    return f"{cost:.0f}" if math.isfinite(cost) else f">{sum(r.cost for r in results)}"


def ratio_text(mine: list[Result], greedy: list[Result]) -> str:
    """Cost per success over greedy's. A side that never reached the target has only a lower bound (every run's
    cost), so the ratio is a bound: ``<`` when greedy never did, ``>`` when this search never did, and ``n/a``
    when neither did. Never 0 or infinity for "never"."""
    a, b = per_success(mine), per_success(greedy)
    if math.isfinite(a) and math.isfinite(b):
        return f"{a / b:.2f}"
    if math.isfinite(a):
        return f"<{a / sum(r.cost for r in greedy):.2f}"
    if math.isfinite(b):
        return f">{sum(r.cost for r in mine) / b:.2f}"
    return "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--cases", type=int, default=80)
    parser.add_argument("--budget", type=int, default=2500, help="case runs + judge calls per run")
    parser.add_argument("--generations", type=int, default=400, help="a cap; the budget stops runs first")
    parser.add_argument("--accuracy", type=float, default=0.8)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--target", type=float, default=0.965)
    parser.add_argument(
        "--wall-clock", type=float, default=86400, help="seconds per run; only a guard, the budget stops runs"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="assay-sift-"))
    print(
        f"bin packing, {args.cases} cases ({int(args.cases * 0.7)} dev runs per evaluation), judge accuracy "
        f"{args.accuracy}, K {args.k}, target dev score {args.target}, a budget of {args.budget} case runs + "
        f"judge calls per run (at most {args.generations} generations, {args.wall_clock:.0f} s), "
        f"{args.seeds} seeds",
        flush=True,
    )
    results: dict[str, list[Result]] = {}
    for kind in ("greedy", "ranked", "judge-first"):
        start = time.monotonic()
        results[kind] = [run(kind, seed, args, work) for seed in range(args.seeds)]
        mine = results[kind]
        shown = ", ".join(f"{r.cost}" if r.reached else f"{r.cost}*" for r in mine)
        other = [r.stop for r in mine if r.stop not in ("target reached", "budget spent")]
        print(
            f"{kind:12s} cost per success {per_success_text(mine):>7s}"
            f"  ratio to greedy {ratio_text(mine, results['greedy']):>5s}"
            f"  reached {sum(r.reached for r in mine)}/{args.seeds}"
            f"  mean cost {statistics.mean(r.cost for r in mine):6.0f}"
            f"  per seed [{shown}] (* missed)  ({time.monotonic() - start:.0f}s)"
            + (f"  NOT budget-bound: {'; '.join(other)}" if other else ""),
            flush=True,
        )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
