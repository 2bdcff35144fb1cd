"""Offline search without an LLM, kept honest: problem families in two halves, fixed starts, and random search
and Optuna alone at an equal budget.

Each family (``benchmarks/tasks/tune/*`` and ``benchmarks/tasks/check/*``; see ``benchmarks/tasks/family.py``)
becomes a user's project in a fresh git repository: its fixed start (a function, a constructor, a rule set
returning a record, a config file a script reads, a class) as the artifact, ten cases each carrying an instance.
An assay run is a real ``assay evolve`` (Python API) at the standard preset, whose budget is its generations
(100): the wall clock is raised to a day and no plateau rule is set, so the machine's load cannot change what a
run does. The methods, on the same seeds:

- ``default``: today's offline default (``mutate``: structural edits alternated with Optuna tuning);
- ``random``: random search over the same operators (edit or tuning chosen by a coin, Optuna's random sampler);
- ``optuna-tpe`` and ``optuna-cmaes``: Optuna alone (``benchmarks/optuna_alone.py``), a plain study outside
  assay over the numbers the family declares (``PARAMETERS``), at Optuna's default sampler (TPE) or CMA-ES, each
  trial run on the project's dev cases, for as many case runs as the ``default`` run of the same family and seed
  spent (its outcome's count: baseline, candidates, holdout and regression checks, reruns). A family that
  declares no numbers has no Optuna row (``-``).

Each run's best artifact is then measured on 20 instances no run ever saw; the first table gives per family the
start's and the reference's gap (the textbook heuristic, where one exists) and each method's mean and worst over
the seeds; the second, per method, the mean case runs and the share of case runs that went to candidates that
crashed (a dev case raised, timed out or printed nothing) or were screened out (assay), or to trials that raised
(Optuna). The ``tune`` half is what the search is developed on; the ``check`` half is run only to report.

    python benchmarks/offline_search.py                    # both halves, 5 seeds, 100 generations, 2 processes
    python benchmarks/offline_search.py --half check       # the check half only
    python benchmarks/offline_search.py --families shelves --seeds 2 --generations 20
    python benchmarks/offline_search.py --families curve --methods optuna-tpe --case-runs 700
    python benchmarks/offline_search.py --families binpack_uniform --from-reference --more-dev 20
    python benchmarks/offline_search.py --families binpack_uniform --from-reference --methods default --seeds 30
    python benchmarks/offline_search.py --save runs.jsonl --families cache     # one process per part,
    python benchmarks/offline_search.py --save runs.jsonl --families depots    # the same file,
    python benchmarks/offline_search.py --save runs.jsonl --tables-only        # then the tables of all

``--from-reference`` starts every run from the family's reference instead (the search must improve on the
textbook heuristic itself; the table's ``start`` column is then the reference's gap), ``--more-dev N`` gives each
project N more dev-only instances as a ``cases.dev_files`` file (its holdout stays the ten cases' split; Optuna
alone runs its trials on them too). ``--save FILE`` appends each finished run to FILE (JSON lines) and skips the
runs FILE already holds, so an interrupted benchmark resumes and several processes can share the work.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import shlex
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe
from optuna_alone import applies, run_study
from tasks import HALVES, UNSEEN_SEEDS, Family, families

from assay.config import load_config
from assay.evaluation.evaluator import EvalResult
from assay.evaluation.session import select_cases
from assay.history.git import Git
from assay.history.runfiles import read_events
from assay.loop.engine import Evolution
from assay.loop.events import Committed, Decided, Event, Measured, NoiseMeasured, typed_events
from assay.proposers import OfflineProposer, ProposerView
from assay.proposers.offline import FAMILIES
from assay.proposers.tune import TuneProposer
from assay.proposers.tune.evidence import Evidence

ASSAY_METHODS = ("default", "random")
OPTUNA_METHODS = ("optuna-tpe", "optuna-cmaes")
METHODS = (*ASSAY_METHODS, *OPTUNA_METHODS)


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
    generations: int  # an Optuna study's trials
    stop: str
    seconds: float
    dead: list[str] = field(default_factory=list)  # the best's branches no dev instance of the run reaches
    case_runs: int = 0  # what the run spent, all of it
    crashed: int = 0  # of which on candidates that crashed or were screened out (trials that raised)
    dev: list[int] = field(default_factory=list)  # the seeds of the instances of the run's dev cases

    def key(self) -> tuple[str, str, str, int]:
        return (self.half, self.family, self.method, self.seed)


def settings(seed: int, generations: int | None, without: tuple[str, ...] = ()) -> str:
    lines = ["preset: standard", f"seed: {seed}", "wall_clock_s: 86400"]
    if generations is not None:
        lines.append(f"max_generations: {generations}")
    if without:
        lines.append(f"proposer: {{type: mutate, without: [{', '.join(without)}]}}")
    return "\n".join(lines) + "\n"


def run_one(
    folder: Path,
    method: str,
    seed: int,
    generations: int | None,
    workdir: Path,
    more_dev: int = 0,
    begin: str = "start",
    without: tuple[str, ...] = (),
) -> Run:
    """One ``assay evolve`` of one family by one method and seed, and its best program's unseen gap: from
    the family's ``begin`` program, with ``more_dev`` dev-only instances."""
    family = Family(folder, begin)
    root = family.project(
        workdir / f"{family.half}-{family.name}-{method}-{seed}",
        settings(seed, generations, without if method == "default" else ()),
        more_dev,
    )
    config = load_config(root / "assay.yaml")
    proposer = RandomSearch(seed) if method == "random" else None
    started = time.monotonic()
    outcome = asyncio.run(Evolution(config, proposer=proposer).start())
    seconds = time.monotonic() - started
    best = Git(root).show_file(outcome.best.commit, family.task.FILE) if outcome.best.commit else None
    source = best if best is not None else family.start
    dev = dev_seeds(root)
    events = typed_events(read_events(root / ".assay" / "runs" / outcome.run_id))
    return Run(
        family.name,
        family.half,
        method,
        seed,
        family.unseen_gap(source),
        outcome.generations,
        outcome.stop_reason,
        seconds,
        family.dead_branches(source, dev),
        outcome.case_runs,
        crashed_case_runs(events),
        dev,
    )


def run_optuna(
    folder: Path, method: str, seed: int, dev: list[int], budget: int, begin: str = "start"
) -> Run:
    """Optuna alone (``optuna_alone.run_study``) on one family by one sampler and seed, over the instances of
    ``dev``, in at most ``budget`` case runs, and its best artifact's unseen gap."""
    family = Family(folder, begin)
    started = time.monotonic()
    study = run_study(
        family, method.removeprefix("optuna-"), seed, [family.task.instance(s) for s in dev], budget
    )
    return Run(
        family.name,
        family.half,
        method,
        seed,
        family.unseen_gap(study.source),
        study.trials,
        f"{study.case_runs} of {budget} case runs in {study.trials} trials ({study.failed} raised)",
        time.monotonic() - started,
        family.dead_branches(study.source, dev),
        study.case_runs,
        study.crashed_case_runs,
        dev,
    )


def broken(dev: EvalResult | None) -> bool:
    """A candidate L1 stopped, or one of whose dev cases raised, timed out or printed nothing."""
    return dev is None or any(not c.output.ok or not c.output.text.strip() for c in dev.cases)


def crashed_case_runs(events: list[Event]) -> int:
    """The case runs a run spent on candidates that crashed on a dev case or were screened out (each event's
    case runs go to the commit it is about; the baseline is no candidate)."""
    spent: dict[str, int] = defaultdict(int)
    bad: set[str] = set()
    for event in events:
        commit = None
        if isinstance(event, Measured | NoiseMeasured):
            commit = event.commit
        elif isinstance(event, Decided):
            commit = event.record.commit
        elif isinstance(event, Committed):
            commit = event.proposal.commit
        if commit:
            spent[commit] += event.spent.case_runs
        if isinstance(event, Measured) and event.tier == "L2" and event.generation > 0:
            bad.update([event.commit] if event.screened_out or broken(event.dev) else [])
    return sum(spent[commit] for commit in bad)


def dev_seeds(root: Path) -> list[int]:
    """The seeds of the instances the run's dev cases carry (case ids end in their seed), those of ``dev.json``
    (``cases.dev_files``) included."""
    splits = json.loads((root / ".assay" / "split.json").read_text())["splits"]
    dev = [case for case, split in splits.items() if split == "dev"]
    if (root / "dev.json").exists():
        dev += [case["id"] for case in json.loads((root / "dev.json").read_text())["cases"]]
    return [int(case.rsplit("-", 1)[1]) for case in dev]


def project_dev_seeds(family: Family, workdir: Path, more_dev: int = 0) -> list[int]:
    """The dev seeds of ``family``'s project, split as an assay run splits it (the split depends on case ids
    only, not on the run's seed)."""
    root = family.write(workdir / f"{family.half}-{family.name}-split", "seed: 0\n", more_dev)
    select_cases(load_config(root / "assay.yaml"))
    return dev_seeds(root)


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return int(text)


def _of(runs: list[Run], family: Family, method: str) -> list[Run]:
    return [r for r in runs if r.family == family.name and r.half == family.half and r.method == method]


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
            gaps = [r.gap for r in _of(runs, family, method)]
            row += [f"{statistics.mean(gaps):.2f}%", f"{max(gaps):.2f}%"] if gaps else ["-", "-"]
        rows.append(row)
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def spend_table(chosen: list[Family], runs: list[Run], methods: list[str]) -> str:
    """Per family and method: the mean case runs of a run, and the share of all its runs' case runs that went to
    candidates that crashed or were screened out (for Optuna alone: to trials that raised)."""
    header = ["half", "family"]
    for method in methods:
        header += [f"{method} case runs", f"{method} crashed"]
    rows = [header, ["---"] * len(header)]
    for family in chosen:
        row = [family.half, family.name]
        for method in methods:
            done = _of(runs, family, method)
            total = sum(r.case_runs for r in done)
            row += (
                [
                    f"{total / len(done):.0f}",
                    f"{100 * sum(r.crashed for r in done) / total:.1f}%" if total else "-",
                ]
                if done
                else ["-", "-"]
            )
        rows.append(row)
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def load_saved(path: Path | None) -> list[Run]:
    """The runs a ``--save`` file holds (none when there is no file)."""
    if path is None or not path.exists():
        return []
    return [Run(**json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


def report(done: int, total: int, run: Run) -> None:
    print(
        f"[{done}/{total}] {run.half} {run.family} {run.method} seed {run.seed}: unseen gap"
        f" {run.gap:.2f}% after {run.generations} {'trials' if run.method in OPTUNA_METHODS else 'generations'}"
        f" ({run.stop}; {run.case_runs} case runs, {run.crashed} crashed; {run.seconds:.0f} s)",
        flush=True,
    )


def parse(argv: list[str] | None = None) -> argparse.Namespace:
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
        "--case-runs",
        type=positive,
        default=None,
        metavar="N",
        help="Optuna alone's budget in case runs when the default method is not run (default: what the default "
        "run of the same family and seed spent)",
    )
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
    parser.add_argument(
        "--without",
        nargs="+",
        default=[],
        metavar="MOVE",
        help="the default method without these moves (evolve.proposer.without: operators such as py.guard, the "
        "schedule's py.pair, python.turn, python.flip, python.prune, py.crossover, population, and tune): an "
        "ablation; save its runs to a file of their own",
    )
    parser.add_argument(
        "--save",
        type=Path,
        default=None,
        metavar="FILE",
        help="append each finished run to FILE (JSON lines) and skip the runs it already holds",
    )
    parser.add_argument(
        "--tables-only", action="store_true", help="run nothing: print the tables of the runs --save holds"
    )
    args = parser.parse_args(argv)
    if args.more_dev < 0:
        parser.error("--more-dev: expected a whole number of at least 0")
    if args.first_seed < 0:
        parser.error("--first-seed: expected a whole number of at least 0")
    if args.tables_only and args.save is None:
        parser.error("--tables-only: name the runs' file with --save")
    if set(args.methods) & set(OPTUNA_METHODS) and "default" not in args.methods and args.case_runs is None:
        parser.error("optuna methods without the default: give their budget with --case-runs")
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
    args.chosen = chosen
    return args


def execute(args: argparse.Namespace, tmp: Path) -> list[Run]:
    """Every run the arguments ask for, ``--jobs`` at once; an Optuna run starts once the default run whose case
    runs it matches is done."""
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    assay_methods = [m for m in args.methods if m in ASSAY_METHODS]
    optuna_methods = [m for m in args.methods if m in OPTUNA_METHODS]
    saved = load_saved(args.save)
    done = {r.key(): r for r in saved}
    runs = [r for r in saved if r.family in {f.name for f in args.chosen} and r.seed in seeds]
    work = [(f, m, s) for f in args.chosen for s in seeds for m in assay_methods]
    studies = [(f, m, s) for f in args.chosen if applies(f) for s in seeds for m in optuna_methods]
    total = len(work) + len(studies)
    dev_of: dict[str, list[int]] = {}
    finished = [0]

    def budget_of(family: Family, seed: int) -> int | None:
        if "default" not in args.methods:
            return args.case_runs
        run = done.get((family.half, family.name, "default", seed))
        return run.case_runs if run is not None else None

    def record(run: Run) -> None:
        done[run.key()] = run
        runs.append(run)
        finished[0] += 1
        report(finished[0], total, run)
        if args.save is not None:
            with args.save.open("a") as handle:
                handle.write(json.dumps(asdict(run)) + "\n")

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=context) as pool:
        pending: set[Future[Run]] = set()
        for family, method, seed in work:
            if (family.half, family.name, method, seed) in done:
                finished[0] += 1
                continue
            pending.add(
                pool.submit(
                    run_one,
                    family.folder,
                    method,
                    seed,
                    args.generations,
                    tmp,
                    args.more_dev,
                    family.begin,
                    tuple(args.without),
                )
            )
        while studies or pending:
            for family, method, seed in list(studies):
                if (family.half, family.name, method, seed) in done:
                    studies.remove((family, method, seed))
                    finished[0] += 1
                    continue
                budget = budget_of(family, seed)
                if budget is None:
                    continue  # its default run is not done yet
                studies.remove((family, method, seed))
                if family.name not in dev_of:
                    dev_of[family.name] = project_dev_seeds(family, tmp, args.more_dev)
                pending.add(
                    pool.submit(
                        run_optuna, family.folder, method, seed, dev_of[family.name], budget, family.begin
                    )
                )
            if not pending:
                break
            ready, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in ready:
                record(future.result())
    return runs


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    started = time.monotonic()
    print(f"machine: {describe()}")
    print(f"command: {shlex.join(['python', *sys.argv])}", flush=True)
    if args.tables_only:
        seeds = range(args.first_seed, args.first_seed + args.seeds)
        runs = [r for r in load_saved(args.save) if r.seed in seeds]
    else:
        with tempfile.TemporaryDirectory(prefix="offline-search-") as tmp:
            runs = execute(args, Path(tmp))
    print()
    print(
        f"Unseen gap (percent, lower is better), {args.seeds} seeds per method"
        f" ({args.first_seed} to {args.first_seed + args.seeds - 1}), {time.monotonic() - started:.0f} s in all"
    )
    print(table(args.chosen, runs, args.methods))
    print()
    print(
        "Case runs per run (mean) and the share of them spent on candidates that crashed or were screened out"
    )
    print(spend_table(args.chosen, runs, args.methods))
    dead = [r for r in runs if r.dead]
    print(
        f"best programs holding a branch no dev instance of their run reaches: {len(dead)} of {len(runs)}"
        + "".join(f"\n  {r.family} {r.method} seed {r.seed}: {'; '.join(r.dead)}" for r in dead)
    )


if __name__ == "__main__":
    main()
