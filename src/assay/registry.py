"""One small registry per family of pluggable strategy (checks, runners, executors, ...)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

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
