"""The LLM contract shared by the llm runner and judged checks."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

RUN_INDEX: ContextVar[int] = ContextVar("assay_run_index", default=0)
"""Which repeated run of a case is being made (0: the first). The llm runner and judged checks draw a
distinct ``sample`` per run, so repeated runs are fresh draws even with the response cache on (and run k is
still cached as run k)."""

VOTES_PER_RUN = 1000  # judged checks use samples run * VOTES_PER_RUN + vote, so runs never share a vote


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

    async def aclose(self) -> None:
        """Release the model's clients (an HTTP pool); call from the event loop that used them."""
