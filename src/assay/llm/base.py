"""The LLM contract shared by the llm runner and judged checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass
class Completion:
    """One model answer with its accounting."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    model: str = ""
    cached: bool = False


class LLMError(Exception):
    """A model call failed after retries (or could not be made). Callers record it, never crash on it."""


class LLM(Protocol):
    """An async chat model. ``sample`` distinguishes repeated samples of the same request in the cache;
    ``temperature=None`` / ``max_tokens=None`` mean the model's configured values."""

    model: str

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        system: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        sample: int = 0,
    ) -> Completion: ...
