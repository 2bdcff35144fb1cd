"""Proposers: ``llm`` (a chat model answering with SEARCH/REPLACE blocks or whole files), ``agent`` (an agent
CLI editing the worktree), ``mutate`` (built-in operators, no LLM), ``tune`` (numeric tuning with Optuna) and
the offline default alternating the last two (``OfflineProposer``), one registry ``PROPOSERS``.

Every proposer sees only a ``ProposerView`` built by ``context.build_view``: the hidden checklist is enforced
there (``Redactor``, ``secrets_for``), not by the proposers.
"""

from assay.proposers.agent import AgentProposer
from assay.proposers.base import (
    PROPOSERS,
    CaseFailure,
    DevCase,
    HistoryEntry,
    Proposal,
    Proposer,
    ProposerView,
    Reflection,
    RetryNote,
)
from assay.proposers.context import build_view, describe_failure
from assay.proposers.edits import Answer, Edit, EditError, apply_edits, parse_answer
from assay.proposers.llm import LLMProposer
from assay.proposers.offline import MutateProposer, OfflineProposer
from assay.proposers.prompt import render_prompt
from assay.proposers.redaction import REDACTED, Redactor, secrets_for
from assay.proposers.tune import TuneProposer

__all__ = [
    "PROPOSERS",
    "REDACTED",
    "AgentProposer",
    "Answer",
    "CaseFailure",
    "DevCase",
    "Edit",
    "EditError",
    "HistoryEntry",
    "LLMProposer",
    "MutateProposer",
    "OfflineProposer",
    "Proposal",
    "Proposer",
    "ProposerView",
    "Redactor",
    "Reflection",
    "RetryNote",
    "TuneProposer",
    "apply_edits",
    "build_view",
    "describe_failure",
    "parse_answer",
    "render_prompt",
    "secrets_for",
]
