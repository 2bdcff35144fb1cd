"""The pairwise judge of the tournament (``evolve.tournament.judge``) and the count of its model calls."""

from __future__ import annotations

from assay.config import AssayConfig
from assay.errors import ConfigError
from assay.llm import make_llm
from assay.proposers.redaction import Redactor
from assay.tournament import LLMPairJudge, PairwiseJudge, ScoresJudge

FIELD = "evolve.tournament.judge_llm"


def task_text(config: AssayConfig) -> str:
    """What the llm judge is told the artifact is for (never the checks: those stay hidden)."""
    paths = ", ".join(config.artifact.paths)
    return (
        f"a {config.artifact.kind} artifact ({paths}) that is run on many cases of one task; "
        "the better version handles that task more correctly and more robustly"
    )


def make_match_judge(config: AssayConfig, redactor: Redactor, *, use_cache: bool = True) -> PairwiseJudge:
    """The judge the tournament uses: per-case scores, or a model under blind labels (``judge_llm``, else
    the project's ``judge`` model). Every text it is shown passes through ``redactor``."""
    settings = config.evolve.tournament
    if settings.judge == "scores":
        return ScoresJudge()
    llm_settings = settings.judge_llm or config.judge
    if llm_settings is None:
        raise ConfigError(
            "the llm tournament judge needs a model: set `evolve.tournament.judge_llm: {model: provider:model}` "
            "or a top-level `judge:`",
            file=config.path,
            field=FIELD,
        )
    llm = make_llm(
        llm_settings, cache_dir=config.data_path / "cache" / "llm", use_cache=use_cache, section=FIELD
    )
    return LLMPairJudge(
        llm,
        task_text(config),
        redactor=redactor,
        votes=settings.judge_votes,
        both_orders=settings.judge_both_orders,
        show=settings.judge_show,
        seed=config.evolve.seed,
    )
