"""Cost of a call in USD: configured prices per million tokens, else a small table of common models."""

from __future__ import annotations

from dataclasses import dataclass

# USD per million (input, output) tokens, list prices. A name matches a family when it equals it or
# continues it after a dash (the longest family wins), so dated snapshots (``gpt-4o-2024-08-06``,
# ``claude-3-5-haiku-20241022``) share their family's price but ``gpt-5.2`` does not borrow ``gpt-5``'s.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-haiku-4": (1.00, 5.00),
}


@dataclass(frozen=True)
class Prices:
    """USD per million input and output tokens."""

    input: float = 0.0
    output: float = 0.0

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input + tokens_out * self.output) / 1_000_000


def table_price(name: str) -> Prices:
    """The built-in price of a model name (``openai/`` style vendor prefixes are ignored); 0 if unknown."""
    base = name.rsplit("/", 1)[-1].lower()
    # OpenRouter spells Claude versions with dots (claude-3.5-sonnet).
    if base.startswith("claude"):
        base = base.replace(".", "-")
    best = max((p for p in PRICES if base == p or base.startswith(p + "-")), key=len, default=None)
    return Prices(*PRICES[best]) if best else Prices()


def prices_for(
    name: str, *, priced: bool, price_in: float | None = None, price_out: float | None = None
) -> Prices:
    """Configured prices win; otherwise the table for paid providers (``priced``); local models cost 0."""
    if price_in is not None or price_out is not None:
        return Prices(price_in or 0.0, price_out or 0.0)
    return table_price(name) if priced else Prices()
