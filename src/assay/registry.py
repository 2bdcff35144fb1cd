"""One small registry per family of pluggable part (checks, runners, executors, ...), and the one resolver
every family's names and objects go through (:func:`resolve`, :func:`conform`; the families themselves are
listed in :mod:`assay.extensions`)."""

from __future__ import annotations

import inspect
from abc import ABCMeta
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from assay.errors import ConfigError

T = TypeVar("T")


class UnknownName(KeyError):
    """Raised for a name that is not registered; the message lists the known names."""

    def __str__(self) -> str:
        return str(self.args[0])


class Registry(Generic[T]):
    """Maps names to implementations. Unknown names fail with the list of known ones."""

    def __init__(self, family: str) -> None:
        self.family = family
        self._items: dict[str, T] = {}

    def register(self, name: str, *aliases: str) -> Callable[[T], T]:
        def decorate(item: T) -> T:
            for key in (name, *aliases):
                if key in self._items and self._items[key] is not item:
                    raise ValueError(f"{self.family} {key!r} is registered twice")
                self._items[key] = item
            return item

        return decorate

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise UnknownName(f"unknown {self.family} {name!r}; known: {', '.join(self.names())}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def names(self) -> list[str]:
        return sorted(self._items)


class ExtensionError(ConfigError, TypeError):
    """An object does not conform to its extension point, or a name is not registered (one line)."""


class UnknownExtension(ExtensionError, UnknownName):
    """A name that is not registered in its family (one line listing the known ones); an :class:`UnknownName`
    too, for code that looks names up in a registry itself."""


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


def built_from(registry: Registry[Any]) -> Callable[..., Any]:
    """The build of a family whose registered classes take their options as they are."""

    def build(name: str, *args: Any, **options: Any) -> Any:
        return registry.get(name)(*args, **options)

    return build


def configured(registry: Registry[Any]) -> Callable[..., Any]:
    """The build of a family whose registered classes are built from the configuration, by their
    ``from_config(config, **context)`` classmethod (with no arguments when a class has none: it needs nothing
    of the configuration)."""

    def build(name: str, *args: Any, **context: Any) -> Any:
        cls = registry.get(name)
        made = getattr(cls, "from_config", None)
        return made(*args, **context) if made is not None else cls()

    return build


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
        raise UnknownExtension(str(exc)) from None
    except TypeError as exc:  # a setting it needs was not given (``plateau`` without ``patience``)
        if isinstance(exc, ConfigError):
            raise
        raise ExtensionError(f"{family.name} {spec!r} cannot be built so: {exc}") from None
    return conform(family, made)


def pick(family: Family[T], given: object, name: str, *args: Any, **context: Any) -> T:
    """The part of ``family`` to use: the object ``given`` (checked, used as it is, whatever ``name`` says), or
    the registered member ``given`` names, or else ``name`` (the configured one), built with ``args`` and
    ``context``."""
    if given is not None and not isinstance(given, str):
        return conform(family, given)
    return resolve(family, given or name, *args, **context)


# The classes whose instances were found to conform as they are, per family: an evaluation binds a check per
# case and spec (thousands), and inspecting the same class's members again each time cost milliseconds per
# hundred checks. Each entry holds the family, the members an instance must not replace (the methods conform
# checks the kind of) and the optional members its class lacks (an instance must have them itself).
_CONFORMING: dict[tuple[int, type], tuple[Family[Any], frozenset[str], tuple[str, ...]]] = {}


def _methods(family: Family[Any]) -> frozenset[str]:
    """The members :func:`conform` checks the kind of: the required ones, and the optional ones the base class
    implements as methods (the others, such as a check's ``spec``, need only be present)."""
    optional = [
        name
        for name in family.optional
        if family.base is not None and inspect.isfunction(inspect.getattr_static(family.base, name, None))
    ]
    return frozenset((*family.required(), *optional))


def _plain(cls: type) -> bool:
    """Whether attribute access on ``cls``'s instances is the ordinary lookup (no hooks that could answer
    differently per instance)."""
    hook: object = cls.__getattribute__
    return hook is object.__getattribute__ and not hasattr(cls, "__getattr__")


def conform(family: Family[T], obj: object) -> T:
    """``obj`` as a ``family`` member, given the base class's defaults for the optional members it lacks;
    ExtensionError, naming what is wrong, when it lacks a required member or has one of the wrong kind."""
    key = (id(family), type(obj))
    known = _CONFORMING.get(key)
    own = getattr(obj, "__dict__", None)
    if (
        known is not None
        and known[0] is family
        and own is not None
        and own.keys().isdisjoint(known[1])
        and all(name in own for name in known[2])
    ):
        return obj  # type: ignore[return-value]  # its class conformed, and it replaces none of its methods
    made = _conform(family, obj)
    if made is obj and own is not None and _plain(type(obj)):
        methods = _methods(family)
        if own.keys().isdisjoint(methods):
            lacking = tuple(name for name in family.optional if not hasattr(type(obj), name))
            _CONFORMING[key] = (family, methods, lacking)
    return made


def _conform(family: Family[T], obj: object) -> T:
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
