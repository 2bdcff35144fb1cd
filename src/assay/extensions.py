"""One resolver for every extension point: a registered name or an object in, an object the loop can use out,
or a one-line :class:`ExtensionError` — never a silent fallback to the configured default.

:func:`resolve` builds a registered name as the family's factory does and checks an object against the
family's Protocol (:mod:`assay.protocols`): every required member present and callable, ``async def`` where
the loop awaits it and a plain ``def`` where it does not. An object that is not an instance of the family's
base class (or lacks an optional member) is wrapped so that it gets the base class's defaults for the
optional members it lacks; everything else, attribute reads and writes included, goes to the object itself.
"""

from __future__ import annotations

import inspect
from abc import ABCMeta
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from assay.checks import CHECKS, Check
from assay.errors import ConfigError
from assay.gates import GATES, Gate
from assay.gates.factory import make_gate
from assay.proposers import PROPOSERS, Proposer
from assay.protocols import (
    CheckProtocol,
    GateProtocol,
    PairwiseJudgeProtocol,
    ParentSelectorProtocol,
    ProposerProtocol,
    RunnerProtocol,
    StopRuleProtocol,
)
from assay.registry import Registry, UnknownName
from assay.runners import RUNNERS, Runner
from assay.search import STRATEGIES, ParentSelector
from assay.tournament import JUDGES, PairwiseJudge

T = TypeVar("T")


class ExtensionError(ConfigError, TypeError):
    """An object does not conform to its extension point, or a name is not registered (one line)."""


@dataclass(frozen=True)
class Family(Generic[T]):
    """One extension point. ``protocol`` holds the required members; ``base`` is the type of what
    :func:`conform` returns and gives the ``optional`` members' defaults (None: objects are used as they are,
    as the loop calls nothing but the required members); ``defaults`` replace a base default that would not
    work for an object of another class; ``build`` makes a registered name (None: objects only)."""

    name: str
    protocol: type
    base: type[T] | None = None
    optional: tuple[str, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    registry: Registry[Any] | None = None
    build: Callable[..., T] | None = None

    def required(self) -> dict[str, Callable[..., Any]]:
        """The Protocol's members, by name."""
        return {n: m for n, m in vars(self.protocol).items() if not n.startswith("_") and callable(m)}

    def signature(self, name: str) -> str:
        """How the Protocol declares ``name``, without the types (``async def decide(data) -> GateDecision``)."""
        method = self.required()[name]
        sig = inspect.signature(method)
        params = [p.replace(annotation=inspect.Parameter.empty) for p in list(sig.parameters.values())[1:]]
        shown = sig.replace(parameters=params, return_annotation=inspect.Signature.empty)
        returns = method.__annotations__.get("return")
        prefix = "async def" if inspect.iscoroutinefunction(method) else "def"
        return f"{prefix} {name}{shown}" + (f" -> {returns}" if returns else "")


def _from(registry: Registry[Any]) -> Callable[..., Any]:
    def build(name: str, *args: Any, **options: Any) -> Any:
        return registry.get(name)(*args, **options)

    return build


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
    registry=STRATEGIES,
    build=_from(STRATEGIES),
)
PROPOSER: Family[Proposer] = Family(
    "proposer",
    ProposerProtocol,
    Proposer,
    ("name", "redraws", "aclose", "tidies", "tidy"),
    registry=PROPOSERS,
    build=_from(PROPOSERS),
)
PAIRWISE_JUDGE: Family[PairwiseJudge] = Family(
    "pairwise judge", PairwiseJudgeProtocol, PairwiseJudge, ("name",), registry=JUDGES, build=_from(JUDGES)
)
STOP_RULE: Family[StopRuleProtocol] = Family("stop rule", StopRuleProtocol)
RUNNER: Family[Runner] = Family(
    "runner",
    RunnerProtocol,
    Runner,
    ("name", "io_bound", "sandbox", "default_concurrency", "release", "aclose", "context", "workers"),
    # The base's sandbox reads a RunContext an object of another class need not have.
    defaults={"sandbox": None},
    registry=RUNNERS,
    build=_from(RUNNERS),
)
CHECK: Family[Check] = Family(
    "check",
    CheckProtocol,
    Check,
    ("name", "judged", "prose", "text_value", "prepare", "spec"),
    registry=CHECKS,
    build=_from(CHECKS),
)
FAMILIES: dict[str, Family[Any]] = {
    f.name: f for f in (GATE, PARENT_SELECTOR, PROPOSER, PAIRWISE_JUDGE, STOP_RULE, RUNNER, CHECK)
}


def resolve(family: Family[T], spec: object, *args: Any, **options: Any) -> T:
    """The ``family`` member ``spec`` names (built with ``args`` and ``options``, as its factory builds it) or
    ``spec`` itself, checked by :func:`conform`. ExtensionError for an unknown name (listing the known ones)
    or an object that does not conform."""
    if not isinstance(spec, str):
        if args or options:
            raise ExtensionError(f"options are for a {family.name} given by name, not for an object")
        return conform(family, spec)
    if family.build is None:
        raise ExtensionError(f"a {family.name} is given as an object, not by name ({spec!r})")
    try:
        made = family.build(spec, *args, **options)
    except UnknownName as exc:
        raise ExtensionError(str(exc)) from None
    return conform(family, made)


def conform(family: Family[T], obj: object) -> T:
    """``obj`` as a ``family`` member, given the base class's defaults for the optional members it lacks;
    ExtensionError, naming what is wrong, when it lacks a required member or has one of the wrong kind."""
    kind = type(obj).__name__
    if isinstance(obj, str):
        raise ExtensionError(f"a {family.name} here is an object, not a name ({obj!r})")
    if isinstance(obj, type):
        raise ExtensionError(
            f"{family.name} {obj.__name__} is a class: give an instance, {obj.__name__}(...)"
        )
    required = family.required()
    missing = [name for name in required if not hasattr(obj, name)]
    if missing:
        needs = "; ".join(family.signature(name) for name in missing)
        raise ExtensionError(f"{family.name} {kind} lacks {', '.join(missing)}: a {family.name} has {needs}")
    declared = {name: inspect.iscoroutinefunction(member) for name, member in required.items()}
    if family.base is not None:
        for name in family.optional:
            default = inspect.getattr_static(family.base, name, None)
            if inspect.isfunction(default) and hasattr(obj, name):
                declared[name] = inspect.iscoroutinefunction(default)
    for name, awaited in declared.items():
        _check_member(family, kind, name, getattr(obj, name), awaited)
    if family.base is None:
        return obj  # type: ignore[return-value]  # checked against the Protocol above
    if isinstance(obj, family.base) and all(hasattr(obj, name) for name in family.optional):
        return obj
    return _wrapped(family, family.base, obj)


def _check_member(family: Family[Any], kind: str, name: str, member: object, awaited: bool) -> None:
    if not callable(member):
        raise ExtensionError(f"{family.name} {kind}: {name} is not callable ({type(member).__name__})")
    if awaited and not inspect.iscoroutinefunction(member):
        raise ExtensionError(f"{family.name} {kind}: {name} must be `async def` (the loop awaits it)")
    if not awaited and inspect.iscoroutinefunction(member):
        raise ExtensionError(
            f"{family.name} {kind}: {name} must be a plain `def` (the loop does not await it)"
        )


def _wrapped(family: Family[T], base: type[T], obj: object) -> T:
    """An instance of a subclass of ``base`` whose members are ``obj``'s where it has them (read and written
    through to it) and ``base``'s (or the family's ``defaults``) where it does not."""

    def forward(name: str) -> property:
        return property(lambda self: getattr(obj, name), lambda self, value: setattr(obj, name, value))

    namespace: dict[str, Any] = {
        "__init__": lambda self: None,
        "__getattr__": lambda self, name: getattr(obj, name),
        "__repr__": lambda self: f"{obj!r} (as a {family.name})",
        "name": type(obj).__name__,
    }
    for name, value in family.defaults.items():
        namespace[name] = value
    for name in (*family.required(), *family.optional):
        if hasattr(obj, name):
            namespace[name] = forward(name)
    # Every base is an ABC: the subclass is made by its metaclass, which sees the abstract members overridden.
    adapter = ABCMeta(f"{type(obj).__name__}As{base.__name__}", (base,), namespace)
    made: T = adapter()
    return made
