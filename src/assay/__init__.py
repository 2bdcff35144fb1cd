"""assay: make any evaluable artifact improve itself against cases, keeping only changes that prove better.

The front door (docs/api.md): :func:`evaluate` and :func:`evolve` (and their ``*_async`` forms), with the
types a caller plugs in or gets back. They are imported on first use, so ``import assay`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.api import evaluate, evaluate_async, evolve, evolve_async
    from assay.config import AssayConfig, load_config
    from assay.evaluation.evaluator import EvalResult
    from assay.extensions import ExtensionError
    from assay.gates import Gate, GateDecision, GateInput
    from assay.history.records import CandidateRecord
    from assay.loop.engine import RunOutcome
    from assay.loop.state.view import CandidateView, RunView
    from assay.loop.stops import StopRule
    from assay.model import Case, CaseResult, CheckResult, CheckSpec, Dimension, Output, Split
    from assay.proposers import CaseFailure, DevCase, HistoryEntry, Proposal, Proposer, ProposerView
    from assay.protocols import (
        CheckProtocol,
        GateProtocol,
        PairwiseJudgeProtocol,
        ParentSelectorProtocol,
        ProposerProtocol,
        RunnerProtocol,
        StopRuleProtocol,
    )
    from assay.search import ParentSelector
    from assay.tournament import Contestant, PairVerdict, PairwiseJudge

from assay.version import __version__ as __version__

_LAZY = {
    "Case": "assay.model",
    "CaseResult": "assay.model",
    "CheckResult": "assay.model",
    "CheckSpec": "assay.model",
    "Output": "assay.model",
    "Dimension": "assay.model",
    "CandidateRecord": "assay.history.records",
    "Split": "assay.model",
    "evaluate": "assay.api",
    "evaluate_async": "assay.api",
    "evolve": "assay.api",
    "evolve_async": "assay.api",
    "AssayConfig": "assay.config",
    "load_config": "assay.config",
    "EvalResult": "assay.evaluation.evaluator",
    "ExtensionError": "assay.extensions",
    "CheckProtocol": "assay.protocols",
    "GateProtocol": "assay.protocols",
    "PairwiseJudgeProtocol": "assay.protocols",
    "ParentSelectorProtocol": "assay.protocols",
    "ProposerProtocol": "assay.protocols",
    "RunnerProtocol": "assay.protocols",
    "StopRuleProtocol": "assay.protocols",
    "Gate": "assay.gates",
    "GateDecision": "assay.gates",
    "GateInput": "assay.gates",
    "RunOutcome": "assay.loop.engine",
    "RunView": "assay.loop.state.view",
    "CandidateView": "assay.loop.state.view",
    "StopRule": "assay.loop.stops",
    "Proposal": "assay.proposers",
    "Proposer": "assay.proposers",
    "ProposerView": "assay.proposers",
    "DevCase": "assay.proposers",
    "CaseFailure": "assay.proposers",
    "HistoryEntry": "assay.proposers",
    "ParentSelector": "assay.search",
    "PairwiseJudge": "assay.tournament",
    "Contestant": "assay.tournament",
    "PairVerdict": "assay.tournament",
}

__all__ = [
    "AssayConfig",
    "CandidateRecord",
    "CandidateView",
    "Case",
    "CaseFailure",
    "CaseResult",
    "CheckProtocol",
    "CheckResult",
    "CheckSpec",
    "Contestant",
    "DevCase",
    "Dimension",
    "EvalResult",
    "ExtensionError",
    "Gate",
    "GateDecision",
    "GateInput",
    "GateProtocol",
    "HistoryEntry",
    "Output",
    "PairVerdict",
    "PairwiseJudge",
    "PairwiseJudgeProtocol",
    "ParentSelector",
    "ParentSelectorProtocol",
    "Proposal",
    "Proposer",
    "ProposerProtocol",
    "ProposerView",
    "RunOutcome",
    "RunView",
    "RunnerProtocol",
    "Split",
    "StopRule",
    "StopRuleProtocol",
    "evaluate",
    "evaluate_async",
    "evolve",
    "evolve_async",
    "load_config",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
