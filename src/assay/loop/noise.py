"""Noise in the loop: repeated baseline runs, the gate they call for, and fresh runs on demand for the paired
sequential test (docs/noise.md).

The baseline's dev cases run ``evolve.noise.baseline_runs`` times (default 3 for llm or agent runners and for
judged checks, else 1). When any case's runs disagree, the default ``ratchet`` gate judges progress and
regression with the paired sequential test (`assay.gates.paired`); when all agree, it keeps the strict rule.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path
from typing import Any, Literal

from assay.config import AssayConfig
from assay.evaluation.evaluator import EvalResult
from assay.evaluation.session import uses_judge
from assay.fsutil import atomic_write_text
from assay.gates import GATES, Gate
from assay.history.git import Git
from assay.loop.measure import Measurer
from assay.model import Split
from assay.stats import NoiseEstimate, SequentialOptions, default_repeats, estimate_noise

Runs = dict[str, list[float]]
NOISE_FILE = "noise.json"
PAIRED = ("noisy", "paired")


def verdicts(result: EvalResult) -> Runs:
    """One run per case: 1.0 for a pass, 0.0 for a failure."""
    return {c.id: [1.0 if c.passed else 0.0] for c in result.cases}


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


def make_gate(config: AssayConfig, estimate: NoiseEstimate | None) -> tuple[Gate, bool]:
    """The gate for this run and whether it is the paired one. ``ratchet`` becomes the paired gate when the
    baseline was noisy; ``ratchet_strict`` never does; ``noisy`` (``paired``) always is."""
    name = config.evolve.gate
    options = dict(config.evolve.gate_options)
    noisy = estimate is not None and not estimate.deterministic
    if name in PAIRED or (name == "ratchet" and noisy):
        cls = GATES.get("noisy")
        # The strict rule's own options (noise_reruns, score_tolerance) mean nothing to the paired test.
        accepted = inspect.signature(cls).parameters
        kept = {k: v for k, v in options.items() if k in accepted}
        return cls(options=sequential_options(config), **kept), True
    return GATES.get(name)(**options), False


class Noise:
    """Per-commit runs for the paired gate, and a sampler that runs dev cases on either side."""

    def __init__(self, measurer: Measurer, git: Git, parent_tree: Path, prefix: str) -> None:
        self.measurer = measurer
        self.git = git
        self.parent_tree = parent_tree
        self.prefix = prefix
        self.estimate: NoiseEstimate | None = None
        self.runs: dict[str, Runs] = {}
        self._parent_at: str | None = None
        self.collected: dict[str, Runs] = {"parent": {}, "candidate": {}}  # runs the gate asked for
        self.tokens = 0
        self.cost_usd = 0.0

    async def measure_baseline(
        self, commit: str, dev: EvalResult, workdir: Path, times: int
    ) -> NoiseEstimate:
        """Run the dev cases ``times`` runs in all (the measurement ``dev`` is the first)."""
        runs = verdicts(dev)
        for run in range(1, times):
            again = await self.measurer.split(Split.DEV, workdir, None, run_index=run)
            assert again is not None
            for case in again.cases:
                runs[case.id].append(1.0 if case.passed else 0.0)
                self.tokens += case.tokens
                self.cost_usd += case.cost_usd
        self.runs[commit] = runs
        self.estimate = estimate_noise(runs)
        return self.estimate

    def save(self, run_dir: Path, commit: str) -> None:
        assert self.estimate is not None
        data = {"commit": commit, "runs": self.runs[commit], **self.estimate.to_dict()}
        atomic_write_text(run_dir / NOISE_FILE, json.dumps(data, indent=1) + "\n")

    def load(self, run_dir: Path) -> None:
        """The baseline's runs and estimate of a run being resumed (nothing if it had none)."""
        path = run_dir / NOISE_FILE
        if not path.exists():
            return
        data = json.loads(path.read_text())
        self.runs[data["commit"]] = {k: [float(v) for v in vs] for k, vs in data["runs"].items()}
        self.estimate = estimate_noise(self.runs[data["commit"]])

    def gate_extra(self, parent: str, parent_dev: EvalResult, candidate_workdir: Path) -> dict[str, Any]:
        """The paired gate's inputs: the parent's known runs and a sampler for new runs on both sides."""
        self.collected = {"parent": {}, "candidate": {}}
        known = self.runs.get(parent) or verdicts(parent_dev)
        # The test asks for runs of many cases at once: keep to the evaluator's concurrency.
        slots = asyncio.Semaphore(self.measurer.evaluator.concurrency)

        async def sample(case_id: str, side: Literal["parent", "candidate"], n: int) -> list[float]:
            workdir = candidate_workdir if side == "candidate" else self._parent_workdir(parent)
            done = 1 if side == "candidate" else len(known.get(case_id, []))
            done += len(self.collected[side].get(case_id, []))
            out = []
            for run in range(done, done + n):
                async with slots:
                    result = await self.measurer.run_case(case_id, workdir, run_index=run)
                out.append(1.0 if result.passed else 0.0)
                self.tokens += result.tokens
                self.cost_usd += result.cost_usd
            self.collected[side].setdefault(case_id, []).extend(out)
            return out

        return {"sampler": sample, "parent_runs": known}

    def settle(self, parent: str, parent_dev: EvalResult, candidate: str | None, dev: EvalResult) -> None:
        """After a decision: the parent keeps its new runs; a kept ``candidate`` keeps all of its runs."""
        known = self.runs.setdefault(parent, verdicts(parent_dev))
        for cid, extra in self.collected["parent"].items():
            known.setdefault(cid, []).extend(extra)
        if candidate is not None:
            mine = verdicts(dev)
            for cid, extra in self.collected["candidate"].items():
                mine.setdefault(cid, []).extend(extra)
            self.runs[candidate] = mine
        self.collected = {"parent": {}, "candidate": {}}

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
