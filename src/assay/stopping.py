"""The stop rule contract: :class:`StopRule`, the registry of the built-in rules by name (the rules themselves
are :mod:`assay.loop.stops`), and the family every stop rule given through the Python API is resolved by."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

from assay.protocols import StopRuleProtocol
from assay.registry import Family, Registry, built_from

if TYPE_CHECKING:
    RunView = Any  # assay.loop.state.view.RunView: what a rule reads of the run


class StopRule(ABC):
    """Returns a one-line reason to stop, or None to go on, from the run as ``run`` shows it (frozen: a rule
    that tries to change it raises).

    ``tidy_first``: whether the proposer may first tidy the best (:meth:`~assay.proposers.Proposer.tidies`)
    when this rule ends the run. True for the rules that say the search is done (a target, a plateau, the
    generations used); False for a limit on time, money or evaluations, and for a user's own rule."""

    tidy_first: ClassVar[bool] = False

    @abstractmethod
    def check(self, run: RunView) -> str | None: ...

    def describe(self) -> str:
        """What the rule stops on, in a few words (plan.md lists the rules in force by these); by default the
        class's name."""
        return type(self).__name__


# The built-in rules by name (a rule that needs a setting takes it as a keyword: ``plateau`` needs ``patience``).
STOP_RULES: Registry[type[StopRule]] = Registry("stop rule")
STOP_RULE: Family[StopRule] = Family(
    "stop rule",
    StopRuleProtocol,
    StopRule,
    ("tidy_first",),
    registry=STOP_RULES,
    build=built_from(STOP_RULES),
)
