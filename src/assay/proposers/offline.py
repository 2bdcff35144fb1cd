"""The offline proposers (no LLM): ``mutate`` with the built-in operators of :mod:`assay.proposers.mutate`, and
the default :class:`OfflineProposer`, which alternates those structural edits with numeric tuning."""

from __future__ import annotations

import random
from pathlib import Path

from assay.config import ParameterSpec
from assay.proposers.base import PROPOSERS, Proposal, Proposer, ProposerView
from assay.proposers.mutate import mutate
from assay.proposers.tune import TuneProposer

FAMILIES = ("mutate", "tune")


@PROPOSERS.register("mutate")
class MutateProposer(Proposer):
    """Built-in operators, no LLM. Deterministic per (seed, generation, draw), so a resumed generation proposes
    the same change again."""

    name = "mutate"
    redraws = 25

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.generation = 0

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        key = f"{self.seed}:{self.generation}" + (f":{view.layer}:{view.attempt}" if view.attempt else "")
        mutation = mutate(dict(view.artifact), layer=view.layer, rng=random.Random(key))
        if mutation is None:
            return Proposal(
                ok=False,
                description="no mutation",
                error=f"no operator applies at layer {view.layer}",
                exhausted=True,
            )
        (worktree / mutation.path).write_text(mutation.new_text, encoding="utf-8")
        return Proposal(ok=True, description=mutation.description, via="mutate")


class OfflineProposer(Proposer):
    """The offline default: a structural edit (``mutate``) or numeric tuning (``tune``) per generation.

    A structural edit is followed by tuning (of what it introduced, or of the best structures so far); after a
    tuning trial, a Thompson draw over the two families' keep rates in the recent history (a Beta(1 + keeps,
    1 + discards) per family) decides.
    When the chosen family has nothing to offer the other one is tried; when its draws all repeat earlier
    candidates, the loop moves on to the next layer. Deterministic per (seed, generation, draw)."""

    name = "mutate"
    redraws = 25

    def __init__(self, seed: int = 0, parameters: dict[str, ParameterSpec] | None = None) -> None:
        self.seed = seed
        self.generation = 0
        self.operators = MutateProposer(seed)
        self.tuner = TuneProposer(seed, parameters)

    def choose(self, view: ProposerView) -> str:
        """The family to draw from first, from the history of decisions."""
        history = [h for h in view.history if h.get("proposer") in FAMILIES]
        if history and history[-1].get("proposer") == "mutate":
            return "tune"
        rng = random.Random(f"{self.seed}:family:{self.generation}")
        draws = {}
        for family in FAMILIES:
            tried = [h for h in history if h.get("proposer") == family]
            keeps = sum(1 for h in tried if h.get("decision") == "keep")
            draws[family] = rng.betavariate(1 + keeps, 1 + len(tried) - keeps)
        return max(FAMILIES, key=lambda f: draws[f])

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        first = self.choose(view)
        order = [first, *(f for f in FAMILIES if f != first)]
        made = Proposal(ok=False, description="no change", error="nothing to propose", exhausted=True)
        for family in order:
            part = self.tuner if family == "tune" else self.operators
            part.generation = self.generation
            made = await part.propose(view, worktree, editable=editable)
            if made.ok or not made.exhausted:
                return made
        return made
