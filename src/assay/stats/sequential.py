"""Sequential sampling: add runs only while the comparison is undecided, only on the cases that need them.

Looks follow ``SequentialOptions.schedule()``. At each look the stratified test (`assay.stats.stratified`)
compares the runs so far; "better" or "worse" is declared when its one-sided p-value falls below the look's
nominal level, taken from O'Brien-Fleming (or Pocock) alpha-spending boundaries, so the error rates hold over
all looks. Between looks, only unsettled cases get runs: a case is settled when all its parent and candidate
runs agree (a deterministic case costs ``min_runs`` candidate runs). See docs/noise.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from statistics import NormalDist, fmean
from typing import Literal, Protocol

from assay.stats.boundaries import efficacy_bounds
from assay.stats.options import SequentialOptions
from assay.stats.result import SequentialResult, TestDecision
from assay.stats.stratified import case_regressions, mean_difference, stratified_test

Side = Literal["parent", "candidate"]
PASS = 0.5


class Sampler(Protocol):
    """Runs one case ``n`` more times on one side; returns the new runs' scores (1 pass, 0 fail, or [0, 1])."""

    def __call__(self, case_id: str, side: Side, n: int) -> Awaitable[list[float]]: ...


def _unanimous(runs: Sequence[float]) -> bool:
    return all(v == runs[0] for v in runs)


def _flip(old: Sequence[float], new: Sequence[float]) -> bool:
    """All parent runs passed and all candidate runs failed."""
    return bool(old) and bool(new) and all(v >= PASS for v in old) and all(v < PASS for v in new)


class _Comparison:
    """The runs so far, kept per case as batches: batch 0 holds the known runs and the first look's, each
    later look adds one batch with equal new runs on both sides."""

    def __init__(
        self,
        parent: Mapping[str, Sequence[float]],
        candidate: Mapping[str, Sequence[float]],
        sampler: Sampler | None,
        options: SequentialOptions,
    ) -> None:
        self.batches: dict[str, list[tuple[list[float], list[float]]]] = {
            cid: [(list(parent.get(cid, [])), list(candidate.get(cid, [])))]
            for cid in sorted(set(parent) | set(candidate))
        }
        self.sampler, self.options = sampler, options
        self.extra = {"parent": 0, "candidate": 0}

    def runs(self, side: Side) -> dict[str, list[float]]:
        index = 0 if side == "parent" else 1
        return {cid: [v for batch in batches for v in batch[index]] for cid, batches in self.batches.items()}

    def settled(self, old: Sequence[float], new: Sequence[float]) -> bool:
        if not old or not new or not (_unanimous(old) and _unanimous(new)) or old[0] != new[0]:
            return False
        return old[0] >= PASS or len(new) >= self.options.probe_runs

    def pending(self, old: Sequence[float], new: Sequence[float]) -> bool:
        """An all-pass -> all-fail case that still needs runs before it counts as a regression."""
        cap = min(self.options.confirm_runs, self.options.max_runs_per_case)
        return self.sampler is not None and _flip(old, new) and min(len(old), len(new)) < cap

    def wanted(self, old: Sequence[float], new: Sequence[float], look: int, target: int) -> tuple[int, int]:
        """New (parent, candidate) runs of one case at a look."""
        o = self.options
        if look == 0:
            return max(0, 1 - len(old)), max(0, o.min_runs - len(new))
        if self.pending(old, new):
            step = max(0, min(max(target, o.confirm_runs), o.max_runs_per_case) - len(new))
            return step, step
        if self.settled(old, new) or (o.focus and fmean(new) < fmean(old)):
            return 0, 0
        goal = target
        step = max(0, min(goal, o.max_runs_per_case) - len(new))
        return step, step

    async def top_up(self, look: int, target: int) -> None:
        if self.sampler is None:
            return
        parent, candidate = self.runs("parent"), self.runs("candidate")
        jobs: list[tuple[str, Side, int]] = []
        for cid in self.batches:
            old_n, new_n = self.wanted(parent[cid], candidate[cid], look, target)
            wanted: tuple[tuple[Side, int], ...] = (("parent", old_n), ("candidate", new_n))
            jobs += [(cid, side, n) for side, n in wanted if n > 0]
        got = await asyncio.gather(*(self.sampler(cid, side, n) for cid, side, n in jobs))
        fresh: dict[str, tuple[list[float], list[float]]] = {}
        for (cid, side, n), runs in zip(jobs, got, strict=True):
            values = [float(v) for v in runs][:n]
            fresh.setdefault(cid, ([], []))[0 if side == "parent" else 1].extend(values)
            self.extra[side] += len(values)
        for cid, (old, new) in fresh.items():
            if look == 0:
                self.batches[cid][0][0].extend(old)
                self.batches[cid][0][1].extend(new)
            else:
                self.batches[cid].append((old, new))

    def strata(self) -> list[tuple[list[float], list[float]]]:
        return [batch for batches in self.batches.values() for batch in batches]

    def regressions(self, final: bool) -> tuple[list[str], bool]:
        """Regressed cases, and whether some possible regression is still unconfirmed."""
        parent, candidate = self.runs("parent"), self.runs("candidate")
        flips = {cid for cid in parent if _flip(parent[cid], candidate[cid])}
        pending = set() if final else {cid for cid in flips if self.pending(parent[cid], candidate[cid])}
        found = set(case_regressions(parent, candidate, self.options.alpha)) | (flips - pending)
        return sorted(found), bool(pending)


async def compare_sequential(
    parent_runs: Mapping[str, Sequence[float]],
    sampler: Sampler | None = None,
    *,
    candidate_runs: Mapping[str, Sequence[float]] | None = None,
    options: SequentialOptions | None = None,
) -> SequentialResult:
    """Decide whether the candidate is better than the parent, sampling more runs only while undecided.

    ``parent_runs`` are the parent's known runs per case (reused, not re-paid); ``candidate_runs`` any
    candidate runs already made (e.g. the dev evaluation). Without a sampler it is one fixed-sample test."""
    o = options or SequentialOptions()
    state = _Comparison(parent_runs, candidate_runs or {}, sampler, o)
    schedule = o.schedule() if sampler is not None else (0,)
    bounds = _bounds(state, schedule, o) if sampler is not None else [NormalDist().inv_cdf(1 - o.alpha)]
    for look, target in enumerate(schedule):
        await state.top_up(look, target)
        test = stratified_test(state.strata(), mid_p=o.mid_p)
        final = look == len(schedule) - 1
        regressed, pending = state.regressions(final)
        level = 1 - NormalDist().cdf(bounds[look])
        decision: TestDecision = "undecided"
        if regressed:
            decision, reason = "worse", f"{len(regressed)} cases regressed: {', '.join(regressed[:5])}"
        elif test.p_worse <= level:
            decision, reason = "worse", f"significantly worse (p={test.p_worse:.4f} <= {level:.4f})"
        elif test.p_better <= level and not pending:
            decision, reason = "better", f"significantly better (p={test.p_better:.4f} <= {level:.4f})"
        elif final:
            reason = f"undecided at the cap (p={test.p_better:.4f} > {level:.4f})"
        elif o.futility_z is not None and look > 0 and test.z < o.futility_z:
            reason = f"futile: z={test.z:.2f} < {o.futility_z:g} at look {look + 1}"
        else:
            continue
        break
    parent, candidate = state.runs("parent"), state.runs("candidate")
    return SequentialResult(
        decision=decision,
        reason=reason,
        test=test,
        effect=mean_difference(parent, candidate, level=1 - o.alpha),
        regressed=regressed,
        looks=look + 1,
        level=level,
        parent_runs=parent,
        candidate_runs=candidate,
        extra_parent_runs=state.extra["parent"],
        extra_candidate_runs=state.extra["candidate"],
    )


def _bounds(state: _Comparison, schedule: Sequence[int], o: SequentialOptions) -> list[float]:
    """Efficacy boundaries at the information an always-unsettled case would have at each look."""
    known = sorted(len(batch[0][0]) for batch in state.batches.values() if batch[0][0]) or [1]
    old = known[len(known) // 2]
    info, new, total = [], 0, 0.0
    for look, target in enumerate(schedule):
        if look == 0:
            total = 1 / (1 / target + 1 / old)
        else:
            total += (target - new) / 2  # a batch of k new runs on each side
        new = target
        info.append(total)
    return efficacy_bounds(o.alpha, info, o.spending)


async def majority_votes(sample_vote: Callable[[], Awaitable[bool]], max_votes: int = 3) -> tuple[bool, int]:
    """Ask for votes one at a time until one verdict has a majority of ``max_votes`` (two agreeing votes of
    three); returns (verdict, votes used)."""
    need = max_votes // 2 + 1
    yes = no = 0
    while yes < need and no < need and yes + no < max_votes:
        if await sample_vote():
            yes += 1
        else:
            no += 1
    return yes > no, yes + no
