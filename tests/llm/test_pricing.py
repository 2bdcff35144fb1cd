"""Prices: configured, from the table by longest prefix, zero for local or unknown models."""

from __future__ import annotations

import pytest

from assay.llm.pricing import Prices, prices_for, table_price


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("gpt-4o", (2.50, 10.00)),
        ("gpt-4o-2024-08-06", (2.50, 10.00)),
        ("gpt-4o-mini", (0.15, 0.60)),
        ("gpt-4.1-mini-2025-04-14", (0.40, 1.60)),
        ("gpt-4.1", (2.00, 8.00)),
        ("claude-3-5-sonnet-20241022", (3.00, 15.00)),
        ("claude-3-5-haiku-latest", (0.80, 4.00)),
        ("claude-sonnet-4-5", (3.00, 15.00)),
        ("claude-haiku-4-5-20251001", (1.00, 5.00)),
        ("anthropic/claude-3.5-sonnet", (3.00, 15.00)),
        ("openai/gpt-4o-mini", (0.15, 0.60)),
        ("gpt-5-mini-2025-08-07", (0.25, 2.00)),
        ("gpt-5.2", (0.0, 0.0)),
        ("gpt-4omni", (0.0, 0.0)),
        ("llama3.2", (0.0, 0.0)),
    ],
)
def test_table_price(name: str, expected: tuple[float, float]) -> None:
    price = table_price(name)
    assert (price.input, price.output) == expected


def test_cost_per_million() -> None:
    assert Prices(2.5, 10.0).cost(1_000_000, 500_000) == pytest.approx(7.5)


def test_configured_prices_win_and_local_models_are_free() -> None:
    assert prices_for("gpt-4o", priced=True, price_in=1.0) == Prices(1.0, 0.0)
    assert prices_for("gpt-4o", priced=False) == Prices()
    assert prices_for("my-own-model", priced=False, price_out=3.0) == Prices(0.0, 3.0)
