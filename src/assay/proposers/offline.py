"""The ``mutate`` proposer: the built-in operators of :mod:`assay.proposers.mutate` behind the Proposer contract."""

from __future__ import annotations

import random
from pathlib import Path

from assay.proposers.base import PROPOSERS, Proposal, Proposer, ProposerView
from assay.proposers.mutate import mutate


@PROPOSERS.register("mutate")
class MutateProposer(Proposer):
    """Built-in operators, no LLM (the offline default). Deterministic per (seed, generation), so a resumed
    generation proposes the same change again."""

    name = "mutate"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.generation = 0

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        rng = random.Random(f"{self.seed}:{self.generation}")
        mutation = mutate(dict(view.artifact), layer=view.layer, rng=rng)
        if mutation is None:
            return Proposal(
                ok=False, description="no mutation", error=f"no operator applies at layer {view.layer}"
            )
        (worktree / mutation.path).write_text(mutation.new_text, encoding="utf-8")
        return Proposal(ok=True, description=mutation.description)
