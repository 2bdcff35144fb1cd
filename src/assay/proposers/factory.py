"""Building the proposer a project configures (``evolve.proposer``)."""

from __future__ import annotations

from assay.config import AssayConfig
from assay.proposers.base import Proposer
from assay.proposers.offline import MutateProposer


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
