"""Tournaments, ratings, search and gates on synthetic problems, with assay's own modules.

(a) Rank recovery: 50 candidates with latent strengths ~ N(0, 1) arrive one by one; a judge names the truly
    stronger of two with probability p. Each newcomer is charged K comparisons. `top_k` (SIFT): against the
    K best incumbents (fewer while there are fewer). `adaptive`: K // 5 of them on the incumbent pairs that
    best settle the top-5 (`boundary_pairs`, from 10 incumbents on), the rest by noisy bisection of the
    newcomer (`NoisyBisection`, repeats allowed, the judge accuracy learned from the outcomes, never the true
    p), so 49·K comparisons in all. Estimators: assay's Bradley-Terry and Elo backends, the raw win rate and
    `ConstantAccuracyRanking` (p-judge: posterior mean rank under a constant-accuracy judge, p learned).
    Each estimator drives its own opponent choice. Reported: Spearman with the true strengths and top-5
    recall, averaged over seeds. Target (p=0.8, K=10, adaptive): Spearman >= 0.9 and top-5 recall >= 0.8.
(b) Search efficiency: a child's true accuracy is its parent's plus a random step (clipped to [0, 1]) and is
    observed with binomial noise over n cases. Greedy, ranked (SIFT) and dgm parent selection (assay.search)
    expand the archive until a candidate with true accuracy >= target is evaluated, or the cap is hit.
(c) Gate error rates: 40 cases (60% near-deterministic at pass probability 0.98 or 0.02, 40% uniform in
    0.2-0.8), one run per case for parent and candidate; null change, small gain (4 cases +0.4) and medium
    gain (8 cases +0.4), gains drawn among the cases that do not already pass ~always. Gates: assay's
    ratchet (3 simulated reruns for the noise rule), backpressure and trend (from the GATES registry, "n/a"
    when absent) and naive keep-if-better (pass rate strictly higher).

Run: python benchmarks/ranking.py [--quick] [--seeds 20] [--trials 2000] [--jobs 2]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from multiprocessing import Pool
from multiprocessing.pool import Pool as PoolType

# One BLAS thread per process, set before numpy loads: the fits are 50x50, where OpenBLAS threads only
# contend with each other and with the worker processes (a pseudo-inverse took 100 ms instead of 2 ms).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402

from assay.evaluation.evaluator import EvalResult  # noqa: E402
from assay.gates import GATES, GateInput  # noqa: E402
from assay.model import CaseResult, Output, Split  # noqa: E402
from assay.ratings import BradleyTerryRating, MatchOutcome, RatingBackend, make_rating  # noqa: E402
from assay.ratings.bradley_terry import ConstantAccuracyRanking  # noqa: E402
from assay.search import Archive, Node, make_selector, top_k  # noqa: E402
from assay.search.opponents import NoisyBisection, boundary_pairs  # noqa: E402

N_CANDIDATES = 50
TOP = 5
RANK_TARGET = (0.8, 10)  # (judge accuracy p, K) of the acceptance target
ESTIMATORS = ("bradley_terry", "elo", "winrate", "p_judge")
SELECTORS = ("greedy", "ranked", "dgm")
GATE_NAMES = ("ratchet", "backpressure", "trend")

# --------------------------------------------------------------------------------------------- (a) ranking

Backend = RatingBackend | ConstantAccuracyRanking
Judge = Callable[[str, str], str]


def _estimates(
    kind: str, backend: Backend, names: Sequence[str]
) -> tuple[dict[str, float], dict[str, float]]:
    """Each name's estimate and its standard error on the same scale."""
    if isinstance(backend, ConstantAccuracyRanking):
        places, middle = backend.positions(), np.zeros(1)
        return (
            {n: -float(places.get(n, middle).mean()) for n in names},
            {n: float(places.get(n, middle).std()) for n in names},
        )
    if isinstance(backend, BradleyTerryRating):
        return {n: backend.log_strength(n) for n in names}, {n: backend.log_strength_error(n) for n in names}
    rated = {n: backend.rating(n) for n in names}
    if kind == "elo":
        return {n: r.rating for n, r in rated.items()}, {n: r.uncertainty for n, r in rated.items()}
    rate = {n: r.wins / r.comparisons if r.comparisons else 0.5 for n, r in rated.items()}
    return rate, {n: 0.5 / math.sqrt(1 + r.comparisons) for n, r in rated.items()}


def _accuracy(backend: Backend, history: Sequence[MatchOutcome], current: dict[str, float]) -> float:
    """The judge accuracy the opponent choice assumes: learned by the posterior, or the (smoothed) share of
    past outcomes that agree with the current estimates. Never the true p."""
    if isinstance(backend, ConstantAccuracyRanking):
        return backend.accuracy()
    agree = sum(o.winner == max((o.a, o.b), key=lambda n: current.get(n, 0.0)) for o in history)
    return min(0.95, max(0.55, (agree + 1) / (len(history) + 2)))


def _adaptive(
    new: str,
    backend: Backend,
    kind: str,
    names: Sequence[str],
    k: int,
    judge: Judge,
    history: list[MatchOutcome],
) -> list[MatchOutcome]:
    """The newcomer's K comparisons: ``K // 5`` on the incumbent pairs that best settle the top (once there are
    2·TOP incumbents), the rest by noisy bisection of the newcomer, repeats allowed."""
    current, errors = _estimates(kind, backend, names)
    incumbents = list(current.items())
    refine = k // 5 if len(names) >= 2 * TOP else 0
    outcomes = [MatchOutcome(a, b, judge(a, b)) for a, b in boundary_pairs(incumbents, errors, TOP, refine)]
    bisection = NoisyBisection(incumbents, _accuracy(backend, history, current), errors)
    while len(outcomes) < k and (opponent := bisection.next()) is not None:
        winner = judge(new, opponent)
        bisection.observe(opponent, winner == new)
        outcomes.append(MatchOutcome(new, opponent, winner))
    return outcomes


def rank_run(task: tuple[float, int, str, str, int]) -> tuple[float, float]:
    """One tournament; returns (Spearman, top-5 recall)."""
    p, k, opponents, kind, seed = task
    strengths = np.random.default_rng(seed).normal(size=N_CANDIDATES)
    names = [f"c{i:02d}" for i in range(N_CANDIDATES)]
    truth = dict(zip(names, strengths, strict=True))
    rng = random.Random(f"{seed}-{p}-{k}-{opponents}-{kind}")

    def judge(a: str, b: str) -> str:
        stronger, weaker = (a, b) if truth[a] > truth[b] else (b, a)
        return stronger if rng.random() < p else weaker

    backend: Backend
    if kind == "p_judge":
        backend = ConstantAccuracyRanking(seed=seed)
    else:
        backend = make_rating("bradley_terry" if kind == "bradley_terry" else "elo")
    history: list[MatchOutcome] = []
    for i in range(1, N_CANDIDATES):
        if opponents == "top_k":
            current, _ = _estimates(kind, backend, names[:i])
            outcomes = [
                MatchOutcome(names[i], o, judge(names[i], o)) for o in top_k(list(current.items()), k)
            ]
        else:
            outcomes = _adaptive(names[i], backend, kind, names[:i], k, judge, history)
        history += outcomes
        backend.update(outcomes)
    final, _ = _estimates(kind, backend, names)
    rho = float(spearmanr([final[n] for n in names], strengths).statistic)
    best_true = set(sorted(names, key=lambda n: -truth[n])[:TOP])
    best_est = set(sorted(names, key=lambda n: (-final[n], n))[:TOP])
    return rho, len(best_true & best_est) / TOP


def rank_table(
    ps: Sequence[float], ks: Sequence[int], seeds: int, pool: PoolType | None
) -> dict[tuple[float, int, str, str], tuple[float, float, float]]:
    keys = [(p, k, o, e) for p in ps for k in ks for o in ("top_k", "adaptive") for e in ESTIMATORS]
    tasks = [(*key, s) for key in keys for s in range(seeds)]
    results = pool.map(rank_run, tasks, chunksize=4) if pool else list(map(rank_run, tasks))
    out: dict[tuple[float, int, str, str], tuple[float, float, float]] = {}
    for n, key in enumerate(keys):
        chunk = results[n * seeds : (n + 1) * seeds]
        rhos = [r for r, _ in chunk]
        out[key] = (statistics.fmean(rhos), statistics.fmean(t for _, t in chunk), statistics.pstdev(rhos))
    return out


# --------------------------------------------------------------------------------------------- (b) search

ROOT_ACCURACY, STEP_MEAN, STEP_SD, TARGET = 0.40, -0.01, 0.05, 0.70


def search_run(task: tuple[str, int, int, int]) -> tuple[int | None, float]:
    """Evaluations until a candidate with true accuracy >= TARGET is evaluated (None: cap reached), and
    the best true accuracy found."""
    strategy, n_cases, cap, seed = task
    rng = np.random.default_rng([seed, n_cases])
    pick = random.Random(seed)
    selector = make_selector(strategy)

    def observe(accuracy: float) -> float:
        return float(rng.binomial(n_cases, accuracy)) / n_cases if n_cases else accuracy

    truth = {"n0": ROOT_ACCURACY}
    archive = Archive([Node("n0", None, observe(ROOT_ACCURACY))])
    for evals in range(2, cap + 1):
        parent = selector.choose(archive, pick)
        archive.record_choice(parent)
        archive.record_child(parent)
        node = f"n{evals - 1}"
        truth[node] = min(1.0, max(0.0, truth[parent] + float(rng.normal(STEP_MEAN, STEP_SD))))
        archive.add(Node(node, parent, observe(truth[node])))
        if truth[node] >= TARGET:
            return evals, truth[node]
    return None, max(truth.values())


def search_table(
    noise: Sequence[int], seeds: int, cap: int, pool: PoolType | None
) -> dict[tuple[str, int], tuple[float, float, float]]:
    keys = [(s, n) for n in noise for s in SELECTORS]
    tasks = [(s, n, cap, seed) for s, n in keys for seed in range(seeds)]
    results = pool.map(search_run, tasks, chunksize=2) if pool else list(map(search_run, tasks))
    out: dict[tuple[str, int], tuple[float, float, float]] = {}
    for i, key in enumerate(keys):
        chunk = results[i * seeds : (i + 1) * seeds]
        evals = sorted(e if e is not None else math.inf for e, _ in chunk)
        success = sum(e is not None for e, _ in chunk) / seeds
        out[key] = (statistics.median(evals), success, statistics.median(b for _, b in chunk))
    return out


# --------------------------------------------------------------------------------------------- (c) gates

N_GATE_CASES, N_DETERMINISTIC = 40, 24
_OUTPUT = Output.model_construct(duration_s=0.0, tokens_in=0, tokens_out=0, cost_usd=0.0)
_CASES = {
    (i, ok): CaseResult.model_construct(
        id=f"case-{i:02d}", split=Split.DEV, passed=ok, score=float(ok), output=_OUTPUT, checks=[]
    )
    for i in range(N_GATE_CASES)
    for ok in (False, True)
}


def _result(verdicts: np.ndarray) -> EvalResult:
    return EvalResult.model_construct(
        cases=[_CASES[i, bool(v)] for i, v in enumerate(verdicts)], static=None, duration_s=0.0
    )


def _probabilities(rng: np.random.Generator, trials: int, gain_cases: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-trial pass probabilities of parent and candidate (shape trials x 40)."""
    base = np.empty((trials, N_GATE_CASES))
    base[:, :N_DETERMINISTIC] = np.where(rng.random((trials, N_DETERMINISTIC)) < 0.5, 0.98, 0.02)
    base[:, N_DETERMINISTIC:] = rng.uniform(0.2, 0.8, (trials, N_GATE_CASES - N_DETERMINISTIC))
    cand = base.copy()
    for t in range(trials):
        improvable = np.flatnonzero(base[t] < 0.9)
        chosen = rng.choice(improvable, size=min(gain_cases, improvable.size), replace=False)
        cand[t, chosen] = np.minimum(1.0, cand[t, chosen] + 0.4)
    return base, cand


async def _kept_share(
    name: str, runs: tuple[np.ndarray, np.ndarray], cand: np.ndarray, rng: np.random.Generator
) -> float:
    parent_runs, cand_runs = runs
    if name == "keep-if-better":
        return float(np.mean(cand_runs.sum(axis=1) > parent_runs.sum(axis=1)))
    gate = GATES.get(name)()  # one gate per row: stateful gates see a stream of decisions
    kept = 0
    for t in range(cand.shape[0]):

        async def rerun(case_id: str, n: int, t: int = t) -> int:
            return int(rng.binomial(n, cand[t, int(case_id.split("-")[1])]))

        parent = _result(parent_runs[t])
        data = GateInput(
            parent=parent, candidate=_result(cand_runs[t]), baseline=parent, rerun=rerun, parent_id=str(t)
        )
        kept += (await gate.decide(data)).keep
    return kept / cand.shape[0]


async def gate_table(trials: int, seed: int = 0) -> dict[str, list[float | None]]:
    rng = np.random.default_rng(seed)
    scenarios = []
    for gain in (0, 4, 8):
        base, cand = _probabilities(rng, trials, gain)
        # Every gate judges the same simulated runs, so the rows differ only by the rule.
        scenarios.append(((rng.random(base.shape) < base, rng.random(cand.shape) < cand), cand))
    out: dict[str, list[float | None]] = {}
    for name in (*GATE_NAMES, "keep-if-better"):
        if name != "keep-if-better" and name not in GATES:
            out[name] = [None, None, None]
            continue
        out[name] = [await _kept_share(name, runs, cand, rng) for runs, cand in scenarios]
    return out


# --------------------------------------------------------------------------------------------- output


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small grid and few seeds (smoke run)")
    parser.add_argument("--seeds", type=int, help="seeds per row in (a) and (b) (default 20; quick 3)")
    parser.add_argument("--trials", type=int, help="trials per row in (c) (default 2000; quick 300)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes for (a) and (b)")
    args = parser.parse_args(argv)
    seeds = args.seeds or (3 if args.quick else 20)
    trials = args.trials or (300 if args.quick else 2000)
    ps, ks = ((0.9,), (3, 10)) if args.quick else ((0.6, 0.7, 0.8, 0.9), (3, 5, 10))
    noise, cap = ((20,), 150) if args.quick else ((0, 80, 20), 400)
    start = time.perf_counter()

    with Pool(args.jobs) if args.jobs > 1 else _no_pool() as pool:
        ranks = rank_table(ps, ks, seeds, pool)
        search = search_table(noise, seeds, cap, pool)
    rows = [
        [f"{p:.1f}", str(k), o, *(f"{ranks[p, k, o, e][i]:.3f}" for e in ESTIMATORS for i in (0, 1))]
        for p in ps
        for k in ks
        for o in ("top_k", "adaptive")
    ]
    heads = [f"{short} {m}" for short in ("BT", "Elo", "winrate", "p-judge") for m in ("rho", "top5")]
    print_table(
        f"(a) Rank recovery: {N_CANDIDATES} candidates, Spearman rho and top-{TOP} recall, mean of {seeds} seeds",
        ["p", "K", "opponents", *heads],
        rows,
    )
    for kind, short in (("bradley_terry", "BT"), ("p_judge", "p-judge")):
        if RANK_TARGET[0] not in ps or RANK_TARGET[1] not in ks:
            break
        rho, recall, sd = ranks[(*RANK_TARGET, "adaptive", kind)]
        met = "MET" if rho >= 0.9 and recall >= 0.8 else "NOT MET"
        print(
            f"target p=0.8 K=10 {short} adaptive: Spearman {rho:.3f} (sd {sd:.3f}) >= 0.9, "
            f"top-5 recall {recall:.3f} >= 0.8: {met}"
        )

    rows = []
    for (strategy, n_cases), (median, success, best) in search.items():
        shown = f">{cap}" if math.isinf(median) else f"{median:g}"
        rows.append([str(n_cases or "exact"), strategy, shown, _pct(success), f"{best:.3f}"])
    print_table(
        f"(b) Search efficiency: evaluations to reach true accuracy >= {TARGET} (root {ROOT_ACCURACY}, "
        f"step N({STEP_MEAN}, {STEP_SD}), cap {cap}, {seeds} seeds)",
        ["n cases", "strategy", "median evals", "success", "median best true acc"],
        rows,
    )

    gates = asyncio.run(gate_table(trials))
    rows = [[name, *(_pct(x) for x in shares)] for name, shares in gates.items()]
    print_table(
        f"(c) Gate error rates: {N_GATE_CASES} cases (40% noisy), one run per case, {trials} trials per cell",
        ["gate", "null false-keep", "small gain kept", "medium gain kept"],
        rows,
    )
    print(f"\ncommand: python {' '.join(sys.argv)}  ({time.perf_counter() - start:.1f} s)")
    return 0


class _no_pool:
    """Stands in for ``Pool`` as a context manager when one process is asked for."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


if __name__ == "__main__":
    raise SystemExit(main())
