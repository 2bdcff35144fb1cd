"""Building the configured proposer; the offline ``mutate`` proposer's adapter to the Proposer contract."""

from __future__ import annotations

import random
from pathlib import Path

from assay.config import AssayConfig
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


def make_proposer(config: AssayConfig, *, use_cache: bool = True) -> Proposer:
    """The proposer named in ``evolve.proposer``."""
    spec = config.evolve.proposer
    if spec.type == "mutate":
        return MutateProposer(seed=config.evolve.seed)
    if spec.type == "llm":
        from assay.proposers.llm import LLMProposer

        assert spec.llm is not None
        return LLMProposer(spec.llm, cache_dir=config.data_path / "cache" / "llm", use_cache=use_cache)
    from assay.proposers.agent import AgentProposer

    assert spec.command is not None
    # The agent works in the worktree, which also holds the cases and the config: hide them while it runs.
    hidden = [*config.cases.files, *config.artifact.forbid]
    if config.path is not None:
        hidden.append(config.path.name)
    return AgentProposer(spec.command, timeout=spec.timeout, env_allow=spec.env_allow, hide=hidden)
