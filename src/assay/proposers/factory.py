"""Building the proposer a project configures (``evolve.proposer``)."""

from __future__ import annotations

from assay.config import AssayConfig
from assay.errors import ConfigError
from assay.proposers.base import Proposer
from assay.proposers.offline import MutateProposer, OfflineProposer
from assay.proposers.tune import TuneProposer


def make_proposer(config: AssayConfig, *, use_cache: bool = True) -> Proposer:
    """The proposer named in ``evolve.proposer``."""
    spec = config.evolve.proposer
    evolve = config.evolve
    if spec.type == "mutate" and spec.tuning:
        return OfflineProposer(seed=evolve.seed, parameters=evolve.parameters, layers=evolve.layers)
    if spec.type == "mutate":
        return MutateProposer(seed=evolve.seed)
    if spec.type == "tune":
        return TuneProposer(seed=evolve.seed, parameters=evolve.parameters)
    if spec.type == "llm":
        from assay.proposers.llm import LLMProposer

        assert spec.llm is not None
        return LLMProposer(spec.llm, cache_dir=config.data_path / "cache" / "llm", use_cache=use_cache)
    from assay.proposers.agent import AgentProposer

    assert spec.command is not None
    # The agent works on a copy outside the project; these stay out of its jail even where a readable path
    # (a home_ro entry, a PATH directory) would show them.
    base = config.base_dir.resolve()
    repository = [p for p in (base, *base.parents) if (p / ".git").exists()][:1]
    protected = [base, config.data_path, *repository]
    try:
        return AgentProposer(
            spec.command,
            timeout=spec.timeout,
            env_allow=spec.env_allow,
            env=spec.env,
            home_ro=spec.home_ro,
            network=spec.network,
            allow_unsandboxed=spec.allow_unsandboxed,
            protected=protected,
        )
    except ConfigError as exc:
        raise ConfigError(exc.message, file=config.path, field=exc.field) from None
