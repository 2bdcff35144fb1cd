"""One resolver for every extension point: a registered name or an object in, an object the loop can use out,
or a one-line :class:`ExtensionError` — never a silent fallback to the configured default.

Every family — gate, parent selector (``evolve.search``), proposer, pairwise judge, stop rule, runner, check,
rating backend, executor — has one registry whose names are the names ``assay.yaml`` takes (``type: mutate``,
``gate: ratchet``, ``search: ranked``, ``tournament.judge: llm``, ``executor.type: ray``), and every place that
builds one, from the configuration or from a parameter of the Python API, goes through :func:`resolve`: a name
is built as the family builds it (a registered class's ``from_config`` classmethod when it has one, given the
configuration; else the class itself), an object is checked and always used as it is.

:func:`conform` checks an object against the family's Protocol (:mod:`assay.protocols`): every required member
present and callable, ``async def`` where the loop awaits it and a plain ``def`` where it does not. An object
that is not an instance of the family's base class (or lacks an optional member) is wrapped so that it gets the
base class's defaults for the optional members it lacks; everything else, attribute reads and writes included,
goes to the object itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.checks.base import CHECK
from assay.evaluation.executor import EXECUTOR
from assay.gates import GATES, Gate
from assay.gates.factory import make_gate
from assay.proposers import PROPOSERS, Proposer
from assay.protocols import (
    GateProtocol,
    PairwiseJudgeProtocol,
    ParentSelectorProtocol,
    ProposerProtocol,
)
from assay.ratings import RATING_BACKEND
from assay.registry import ExtensionError, Family, built_from, configured, conform, pick, resolve
from assay.runners.base import RUNNER
from assay.search import SELECTORS, ParentSelector
from assay.stopping import STOP_RULE
from assay.tournament import JUDGES, PairwiseJudge


def _gate(name: str, options: Mapping[str, float | int] | None = None, **kwargs: Any) -> Gate:
    return make_gate(name, options or {}, **kwargs)


GATE: Family[Gate] = Family(
    "gate", GateProtocol, Gate, ("name", "snapshot", "restore"), registry=GATES, build=_gate
)
PARENT_SELECTOR: Family[ParentSelector] = Family(
    "parent selector",
    ParentSelectorProtocol,
    ParentSelector,
    ("name", "choose"),
    registry=SELECTORS,
    build=built_from(SELECTORS),
)
PROPOSER: Family[Proposer] = Family(
    "proposer",
    ProposerProtocol,
    Proposer,
    ("name", "redraws", "aclose", "tidies", "tidy"),
    registry=PROPOSERS,
    build=configured(PROPOSERS),
)
PAIRWISE_JUDGE: Family[PairwiseJudge] = Family(
    "pairwise judge",
    PairwiseJudgeProtocol,
    PairwiseJudge,
    ("name",),
    registry=JUDGES,
    build=configured(JUDGES),
)
FAMILIES: dict[str, Family[Any]] = {
    f.name: f
    for f in (
        GATE,
        PARENT_SELECTOR,
        PROPOSER,
        PAIRWISE_JUDGE,
        STOP_RULE,
        RUNNER,
        CHECK,
        RATING_BACKEND,
        EXECUTOR,
    )
}


__all__ = [
    "CHECK",
    "EXECUTOR",
    "FAMILIES",
    "GATE",
    "PAIRWISE_JUDGE",
    "PARENT_SELECTOR",
    "PROPOSER",
    "RATING_BACKEND",
    "RUNNER",
    "STOP_RULE",
    "ExtensionError",
    "Family",
    "conform",
    "pick",
    "resolve",
]
