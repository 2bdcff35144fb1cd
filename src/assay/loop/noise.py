"""Noise in the loop: repeated baseline runs, the gate they call for, and fresh runs on demand for the paired
sequential test (docs/noise.md).

The baseline's dev cases run ``evolve.noise.baseline_runs`` times (default 3 for llm or agent runners and for
judged checks, else 1). When any case's runs disagree, the default ``ratchet`` gate judges progress and
regression with the paired sequential test (`assay.gates.paired`); when all agree, it keeps the strict rule.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

from assay.config import AssayConfig
from assay.evaluation.evaluator import EvalResult
from assay.evaluation.session import uses_judge
from assay.history.git import Git
from assay.loop.events import ExtraRuns, Runs
from assay.loop.measure import Measurer, verdicts
from assay.model import Split
from assay.stats import Sampler, SequentialOptions, default_repeats


def baseline_runs(config: AssayConfig, cases: dict[Split, list[Any]]) -> int:
    """``evolve.noise.baseline_runs``, or 3 for llm/agent runners and judged checks, 1 otherwise."""
    if config.evolve.noise.baseline_runs is not None:
        return config.evolve.noise.baseline_runs
    everything = [(c, s) for s, group in cases.items() for c in group]
    return default_repeats(
        llm_runner=config.runner.type in ("llm", "agent"), judged_checks=uses_judge(everything)
    )


def sequential_options(config: AssayConfig) -> SequentialOptions:
    noise = config.evolve.noise
    return SequentialOptions(alpha=noise.alpha, max_runs_per_case=noise.max_runs_per_case)


class NoiseSampler:
    """Fresh dev-case runs for the paired gate, on the candidate's worktree or on a second worktree at the
    parent's commit. It changes no loop state: the runs it made come back in an :class:`ExtraRuns` that the
    ``decided`` event carries, and the fold settles them."""

    def __init__(self, measurer: Measurer, git: Git, parent_tree: Path, prefix: str) -> None:
        self.measurer = measurer
        self.git = git
        self.parent_tree = parent_tree
        self.prefix = prefix
        self._parent_at: str | None = None
        self.tokens = 0
        self.cost_usd = 0.0

    async def baseline(self, dev: EvalResult, workdir: Path, times: int) -> Runs:
        """The baseline's dev cases, ``times`` runs in all (the measurement ``dev`` is the first)."""
        runs = verdicts(dev)
        for run in range(1, times):
            again = await self.measurer.split(Split.DEV, workdir, None, run_index=run)
            assert again is not None
            for case in again.cases:
                runs[case.id].append(1.0 if case.passed else 0.0)
                self.tokens += case.tokens
                self.cost_usd += case.cost_usd
        return runs

    def gate_extra(self, parent: str, known: Runs, candidate_workdir: Path, extra: ExtraRuns) -> Sampler:
        """The paired gate's sampler of new runs on both sides (the parent's ``known`` runs counted), which
        records every run it makes in ``extra``."""
        extra.parent = parent
        # The test asks for runs of many cases at once: keep to the evaluator's concurrency.
        slots = asyncio.Semaphore(self.measurer.evaluator.concurrency)

        async def sample(case_id: str, side: Literal["parent", "candidate"], n: int) -> list[float]:
            workdir = candidate_workdir if side == "candidate" else self._parent_workdir(parent)
            collected = extra.on_candidate if side == "candidate" else extra.on_parent
            done = 1 if side == "candidate" else len(known.get(case_id, []))
            done += len(collected.get(case_id, []))
            out = []
            for run in range(done, done + n):
                async with slots:
                    result = await self.measurer.run_case(case_id, workdir, run_index=run)
                out.append(1.0 if result.passed else 0.0)
                self.tokens += result.tokens
                self.cost_usd += result.cost_usd
            collected.setdefault(case_id, []).extend(out)
            return out

        return sample

    def take_cost(self) -> tuple[int, float]:
        """Tokens and cost of the runs made since the last call (to charge the candidate that needed them)."""
        spent = (self.tokens, self.cost_usd)
        self.tokens, self.cost_usd = 0, 0.0
        return spent

    def _parent_workdir(self, parent: str) -> Path:
        if self._parent_at is None:
            self.git.remove_worktree(self.parent_tree)
            self.git.add_worktree(self.parent_tree, parent)
        elif self._parent_at != parent:
            self.git.reset_worktree(self.parent_tree, parent)
        self._parent_at = parent
        return self.parent_tree / self.prefix if self.prefix else self.parent_tree

    def close(self) -> None:
        if self._parent_at is not None:
            self.git.remove_worktree(self.parent_tree)
            self._parent_at = None
