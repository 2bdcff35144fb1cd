"""Optuna alone: a plain Optuna study over a family's declared numbers, outside assay, as a user with only Optuna
would run it. No assay import here: the study sees the artifact's text, the task's ``PARAMETERS`` and ``gap``, and
the dev instances it is given.

Each trial writes its values into the start (``tasks.parameters.write``) and runs the result on every dev
instance in turn, in process; its value is the mean case score an assay check gives, ``1 / (1 + gap / 100)``,
maximised. A trial whose artifact raises on a case is told as failed (``TrialState.FAIL``): the case runs it made,
the failing one included, count as crashed. The first trial is the start's own values (``enqueue_trial``), as a
user starts from what they have. Trials are asked while a whole trial still fits in ``budget`` case runs, so a
study spends at most its budget and less than one trial's worth below it.

    python benchmarks/optuna_alone.py --family curve --sampler cmaes --budget 300
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tasks import CASE_SEEDS, Family, families, parameters

SAMPLERS = ("tpe", "cmaes")


@dataclass(frozen=True)
class Study:
    """What a study did: the best artifact's text, the case runs it spent and how many went to trials that
    raised, its trials and failed trials."""

    source: str
    case_runs: int
    crashed_case_runs: int
    trials: int
    failed: int
    best_score: float


def applies(family: Family) -> bool:
    """Whether ``family`` declares numbers and its start holds each of them."""
    try:
        for name in family.parameters:
            parameters.read(family.task.FILE, family.start, name)
    except KeyError:
        return False
    return bool(family.parameters)


def sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    """Optuna's default sampler (TPE) or CMA-ES, seeded; CMA-ES samples a choice with its independent sampler, as
    Optuna does."""
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed)
    raise ValueError(f"unknown sampler {name!r}; known: {', '.join(SAMPLERS)}")


def suggest(trial: optuna.Trial, name: str, spec: Any) -> Any:
    """One value of ``name`` in its declared range (``tasks.parameters``)."""
    if isinstance(spec, list):
        return trial.suggest_categorical(name, spec)
    low, high, *scale = spec
    if isinstance(low, int) and isinstance(high, int):
        return trial.suggest_int(name, low, high)
    return trial.suggest_float(name, float(low), float(high), log=scale == ["log"])


def run_study(family: Family, method: str, seed: int, dev: list[Any], budget: int) -> Study:
    """A study of ``family``'s numbers by sampler ``method`` (seeded ``seed``) over the ``dev`` instances, in at
    most ``budget`` case runs."""
    space, task, start = family.parameters, family.task, family.start
    if not space:
        raise ValueError(f"family {family.name} declares no PARAMETERS")
    optuna.logging.set_verbosity(optuna.logging.ERROR)  # CMA-ES notes each choice it leaves to random
    study = optuna.create_study(direction="maximize", sampler=sampler(method, seed))
    study.enqueue_trial({name: parameters.read(task.FILE, start, name) for name in space})
    spent = crashed = 0
    while spent + len(dev) <= budget:
        trial = study.ask()
        values = {name: suggest(trial, name, spec) for name, spec in space.items()}
        runs, scores = 0, []
        try:
            artifact = family.load(parameters.write(task.FILE, start, values))
            for instance in dev:
                runs += 1
                score = 1 / (1 + task.gap(artifact, instance) / 100)
                if not math.isfinite(score):
                    raise ValueError(f"gap gives a score of {score}")
                scores.append(score)
        except Exception:
            runs = max(runs, 1)
            spent, crashed = spent + runs, crashed + runs
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            continue
        spent += runs
        study.tell(trial, statistics.mean(scores))
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    best = max(complete, key=lambda t: t.value or 0.0) if complete else None
    source = parameters.write(task.FILE, start, best.params) if best is not None else start
    failed = sum(t.state == optuna.trial.TrialState.FAIL for t in study.trials)
    return Study(
        source, spent, crashed, len(study.trials), failed, best.value if best and best.value else 0.0
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    known = {f.name: f for f in families() if applies(f)}
    parser.add_argument("--family", required=True, choices=sorted(known))
    parser.add_argument("--sampler", choices=SAMPLERS, default="tpe")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=300, help="case runs (default 300)")
    parser.epilog = (
        "The trials run on the family's first seven case instances (a project's dev split differs)."
    )
    args = parser.parse_args()
    family = known[args.family]
    dev = family.instances(range(CASE_SEEDS.start, CASE_SEEDS.start + 7))
    study = run_study(family, args.sampler, args.seed, dev, args.budget)
    print(
        f"{family.name} {args.sampler} seed {args.seed}: {study.trials} trials ({study.failed} failed),"
        f" {study.case_runs} case runs, best dev score {study.best_score:.4f},"
        f" unseen gap {family.unseen_gap(study.source):.2f}% (start {family.unseen_gap(family.start):.2f}%)"
    )


if __name__ == "__main__":
    main()
