"""The token budget: the estimate, the defaults, and which pieces fit."""

from __future__ import annotations

from assay.proposers.budget import (
    DEFAULT_CONTEXT_TOKENS,
    JOIN_SLACK,
    LOCAL_CONTEXT_TOKENS,
    Piece,
    default_context_tokens,
    estimate_tokens,
    fit,
)


def test_estimate_is_one_token_per_three_bytes() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1 and estimate_tokens("abcd") == 2
    assert estimate_tokens("The quick brown fox jumps over the lazy dog.") == 15  # 44 bytes
    assert estimate_tokens("日本語") == 3  # 9 bytes: one token per CJK character


def test_default_budget_is_smaller_for_local_models() -> None:
    assert default_context_tokens("openai:gpt-4o-mini") == DEFAULT_CONTEXT_TOKENS == 32_000
    assert default_context_tokens(None) == DEFAULT_CONTEXT_TOKENS
    assert default_context_tokens("local:gemma3-270m") == LOCAL_CONTEXT_TOKENS == 8_000


def test_fit_keeps_required_pieces_then_priority_order_and_counts_what_it_left_out() -> None:
    pieces = [
        Piece("task", "t", required=True),
        Piece("case", "big", priority=1),
        Piece("case", "small", priority=2),
        Piece("history", "h", priority=3),
        Piece("case", "too big", priority=4),
        Piece("format", "f", required=True),
    ]
    counts = [50, 60, 10, 10, 40, 50]
    # Required: 100 (+slack); the big case does not fit in 130 but the smaller ones after it still do.
    fitted = fit(pieces, 130, counts)
    assert [p.text for p in fitted.kept] == ["t", "small", "h", "f"]
    assert fitted.left_out == {"case": 2}
    assert fitted.tokens == 50 + 10 + 10 + 50 + 4 * JOIN_SLACK <= 130
    everything = fit(pieces, 1000, counts)
    assert len(everything.kept) == len(pieces) and everything.left_out == {}
    # Required pieces stay even when they alone are over the budget.
    starved = fit(pieces, 10, counts)
    assert [p.text for p in starved.kept] == ["t", "f"] and starved.left_out == {"case": 3, "history": 1}
    assert starved.has(pieces[0]) and not starved.has(pieces[1])
