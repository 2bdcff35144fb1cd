"""The options of a ``local:`` model name (``gemma3-270m?stop=%0A&seed=7``), parsed without loading anything:
configuration checks and starters read them as well as the provider."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode

OPTIONS = ("stop", "seed", "threads", "chat")


@dataclass(frozen=True)
class LocalOptions:
    """A parsed ``local:`` model name: the model and the options after ``?``."""

    name: str
    stop: tuple[str, ...] = ()
    seed: int | None = None
    threads: int | None = None
    chat: bool = False

    def query(self) -> str:
        pairs: list[tuple[str, Any]] = [("stop", s) for s in self.stop]
        pairs += [(k, v) for k, v in (("seed", self.seed), ("chat", int(self.chat))) if v is not None]
        return urlencode(pairs)


def parse_options(spec: str) -> LocalOptions:
    """Parse ``name?stop=%0A&seed=7``; ValueError names a bad or unknown option."""
    name, _, query = spec.partition("?")
    if not name:
        raise ValueError("no model name before '?'")
    values = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query))
    unknown = sorted(set(values) - set(OPTIONS))
    if unknown:
        raise ValueError(f"unknown option {unknown[0]!r}; known: {', '.join(OPTIONS)}")

    def integer(key: str, minimum: int | None = None) -> int | None:
        if key not in values:
            return None
        try:
            number = int(values[key][-1])
        except ValueError:
            raise ValueError(f"option {key} must be an integer, not {values[key][-1]!r}") from None
        if minimum is not None and number < minimum:
            raise ValueError(f"option {key} must be at least {minimum}")
        return number

    chat = values.get("chat", ["0"])[-1].lower() in ("1", "true", "yes")
    stop = tuple(s for s in values.get("stop", []) if s)
    return LocalOptions(name, stop, integer("seed"), integer("threads", 1), chat)
