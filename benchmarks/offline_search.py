"""Offline search without an LLM, kept honest: problem families in two halves, fixed starts, and random search at
an equal budget.

Each family (``benchmarks/tasks/tune/*`` and ``benchmarks/tasks/check/*``; see ``benchmarks/tasks/family.py``)
becomes a user's project in a fresh git repository: its fixed start function as the artifact, ten cases each
carrying an instance. A run is a real ``assay evolve`` (Python API) at the standard preset, whose budget is its
generations (100): the wall clock is raised to a day and no plateau rule is set, so the machine's load cannot
change what a run does. Two methods run at that budget on the same seeds:

- ``default``: today's offline default (``mutate``: structural edits alternated with Optuna tuning);
- ``random``: random search over the same operators (edit or tuning chosen by a coin, Optuna's random sampler).

Each run's best program is then measured on 20 instances no run ever saw; the table gives per family the start's
and the reference's gap (the textbook heuristic, where one exists) and each method's mean and worst over the
seeds. The ``tune`` half is what the search is developed on; the ``check`` half is run only to report.

    python benchmarks/offline_search.py                    # both halves, 5 seeds, 100 generations, 2 processes
    python benchmarks/offline_search.py --half check       # the check half only
    python benchmarks/offline_search.py --families knapsack --seeds 2 --generations 30
    python benchmarks/offline_search.py --families binpack_uniform --from-reference --more-dev 20
    python benchmarks/offline_search.py --families binpack_uniform --from-reference --methods default --seeds 30

``--from-reference`` starts every run from the family's reference instead (the search must improve on the
textbook heuristic itself; the table's ``start`` column is then the reference's gap), ``--more-dev N`` gives each
project N more dev-only instances as a ``cases.dev_files`` file (its holdout stays the ten cases' split).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tasks import HALVES, UNSEEN_SEEDS, Family, families

from assay.config import load_config
from assay.history.git import Git
from assay.loop.engine import Evolution
from assay.proposers import OfflineProposer, ProposerView
from assay.proposers.offline import FAMILIES
from assay.proposers.tune import TuneProposer
from assay.proposers.tune.evidence import Evidence

METHODS = ("default", "random")


class RandomSearch(OfflineProposer):
    """Operators or tuning chosen by a coin, tuning with Optuna's random sampler."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.tuner = TuneProposer(seed, sampler="random")

    def choose(self, view: ProposerView) -> str:
        return random.Random(f"{self.seed}:coin:{view.generation}").choice(FAMILIES)

    def turn(self, view: ProposerView, evidence: Evidence) -> None:
        return None  # no inert guard turned round: that is the default proposer's own rule

    def pair(self, view: ProposerView) -> None:
        return None  # no pairing of the inputs in turn: the default proposer's own rule too


@dataclass(frozen=True)
class Run:
    family: str
    half: str
    method: str
    seed: int
    gap: float  # the best program's mean gap on the unseen instances, in percent
    generations: int
    stop: str
    seconds: float
    dead: list[str] = field(default_factory=list)  # the best's branches no dev instance of the run reaches


def settings(seed: int, generations: int | None) -> str:
    lines = ["preset: standard", f"seed: {seed}", "wall_clock_s: 86400"]
    if generations is not None:
        lines.append(f"max_generations: {generations}")
    return "\n".join(lines) + "\n"


def run_one(
    folder: Path,
    method: str,
    seed: int,
    generations: int | None,
    workdir: Path,
    more_dev: int = 0,
    begin: str = "start",
) -> Run:
    """One ``assay evolve`` of one family by one method and seed, and its best program's unseen gap: from
    the family's ``begin`` program, with ``more_dev`` dev-only instances."""
    family = Family(folder, begin)
    root = family.project(
        workdir / f"{family.half}-{family.name}-{method}-{seed}", settings(seed, generations), more_dev
    )
    config = load_config(root / "assay.yaml")
    proposer = RandomSearch(seed) if method == "random" else None
    started = time.monotonic()
    outcome = asyncio.run(Evolution(config, proposer=proposer).start())
    seconds = time.monotonic() - started
    best = Git(root).show_file(outcome.best.commit, family.task.FILE) if outcome.best.commit else None
    source = best if best is not None else family.start
    return Run(
        family.name,
        family.half,
        method,
        seed,
        family.unseen_gap(source),
        outcome.generations,
        outcome.stop_reason,
        seconds,
        family.dead_branches(source, dev_seeds(root)),
    )


def dev_seeds(root: Path) -> list[int]:
    """The seeds of the instances the run's dev cases carry (case ids end in their seed), those of ``dev.json``
    (``cases.dev_files``) included."""
    splits = json.loads((root / ".assay" / "split.json").read_text())["splits"]
    dev = [case for case, split in splits.items() if split == "dev"]
    if (root / "dev.json").exists():
        dev += [case["id"] for case in json.loads((root / "dev.json").read_text())["cases"]]
    return [int(case.rsplit("-", 1)[1]) for case in dev]


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return int(text)


def table(chosen: list[Family], runs: list[Run], methods: list[str]) -> str:
    """Per family: the start's and the reference's unseen gap, each method's mean and worst over its seeds."""
    header = ["half", "family", "start", "reference"]
    for method in methods:
        header += [f"{method} mean", f"{method} worst"]
    rows = [header, ["---"] * len(header)]
    for family in chosen:
        unseen = family.instances(UNSEEN_SEEDS)
        reference = family.reference
        row = [
            family.half,
            family.name,
            f"{family.unseen_gap(family.start, unseen):.2f}%",
            f"{family.unseen_gap(reference, unseen):.2f}%" if reference else "-",
        ]
        for method in methods:
            gaps = [r.gap for r in runs if r.family == family.name and r.method == method]
            row += [f"{statistics.mean(gaps):.2f}%", f"{max(gaps):.2f}%"] if gaps else ["-", "-"]
        rows.append(row)
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--half", choices=[*HALVES, "both"], default="both", help="which families (default both)"
    )
    parser.add_argument(
        "--families", nargs="+", metavar="NAME", help="only these families (of the chosen half)"
    )
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--seeds", type=positive, default=5, help="seeds per family and method (default 5)")
    parser.add_argument(
        "--first-seed",
        type=int,
        default=0,
        metavar="N",
        help="the seeds are N, N+1, ... (default 0); seeds past those the search was developed on, 0 to 4, "
        "measure it on runs it was never tuned on",
    )
    parser.add_argument(
        "--generations",
        type=positive,
        default=None,
        help="the generation budget (default: the standard preset's, 100)",
    )
    parser.add_argument("--jobs", type=positive, default=2, help="runs at once (default 2)")
    parser.add_argument(
        "--from-reference",
        action="store_true",
        help="start each run from the family's reference (the textbook heuristic) instead of its start; "
        "families without one are left out",
    )
    parser.add_argument(
        "--more-dev",
        type=int,
        default=0,
        metavar="N",
        help="N more dev-only instances per project, as a cases.dev_files file (the holdout is unchanged; "
        "default 0)",
    )
    args = parser.parse_args()
    if args.more_dev < 0:
        parser.error("--more-dev: expected a whole number of at least 0")
    if args.first_seed < 0:
        parser.error("--first-seed: expected a whole number of at least 0")
    chosen = families(args.half)
    if args.families:
        unknown = sorted(set(args.families) - {f.name for f in chosen})
        if unknown:
            parser.error(
                f"no family {', '.join(unknown)} in half {args.half!r}; known: {', '.join(f.name for f in chosen)}"
            )
        chosen = [f for f in chosen if f.name in args.families]
    if args.from_reference:
        chosen = [Family(f.folder, "reference") for f in chosen if f.reference is not None]
    started = time.monotonic()
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="offline-search-") as tmp:
        work = [
            (family.folder, method, seed, family)
            for family in chosen
            for seed in range(args.first_seed, args.first_seed + args.seeds)
            for method in args.methods
        ]
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=context) as pool:
            pending = [
                pool.submit(run_one, *item, args.generations, Path(tmp), args.more_dev, family.begin)
                for *item, family in work
            ]
            for done, future in enumerate(as_completed(pending), 1):
                run = future.result()
                runs.append(run)
                print(
                    f"[{done}/{len(work)}] {run.half} {run.family} {run.method} seed {run.seed}: unseen gap"
                    f" {run.gap:.2f}% after {run.generations} generations ({run.stop}; {run.seconds:.0f} s)",
                    flush=True,
                )
    print()
    print(
        f"Unseen gap (percent, lower is better), {args.seeds} seeds per method"
        f" ({args.first_seed} to {args.first_seed + args.seeds - 1}), {time.monotonic() - started:.0f} s in all"
    )
    print(table(chosen, runs, args.methods))
    dead = [r for r in runs if r.dead]
    print(
        f"best programs holding a branch no dev instance of their run reaches: {len(dead)} of {len(runs)}"
        + "".join(f"\n  {r.family} {r.method} seed {r.seed}: {'; '.join(r.dead)}" for r in dead)
    )


if __name__ == "__main__":
    main()
