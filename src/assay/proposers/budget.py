"""The proposer prompt's token budget: how tokens are counted, and which pieces of a prompt fit.

A prompt is made of **pieces** (the artifact files, one per case shown, one per history line...), each with a
priority. :func:`fit` keeps pieces in priority order while their tokens add up to at most the budget, and says
how many of each kind it left out. Tokens are counted by the model's own tokenizer when the model has one at
hand (a ``local:`` model), else estimated by :func:`estimate_tokens`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

BYTES_PER_TOKEN = 3
DEFAULT_CONTEXT_TOKENS = 32_000
LOCAL_CONTEXT_TOKENS = 8_000
# Pieces are counted one by one; joined, a piece boundary can merge or split a token or two.
JOIN_SLACK = 2

TokenCounter = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """A conservative token count without a tokenizer: one token per 3 bytes of UTF-8. The GPT and Claude
    tokenizers take about 4 characters a token of English prose and 3 to 3.5 of code, so this overcounts
    prose and code; a CJK character (3 bytes) counts as one token."""
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


def default_context_tokens(model: str | None) -> int:
    """``proposer.context_tokens`` when unset: 32,000, or 8,000 for a ``local:`` model (small context,
    slow prompt processing on a CPU)."""
    return (
        LOCAL_CONTEXT_TOKENS if model is not None and model.startswith("local:") else DEFAULT_CONTEXT_TOKENS
    )


@dataclass
class Piece:
    """A part of a prompt: ``section`` names what it is (``case``, ``history``...), ``priority`` orders the
    choice (lower first), ``required`` pieces are kept whatever they cost."""

    section: str
    text: str
    priority: int = 0
    required: bool = False


@dataclass
class Fitted:
    """What :func:`fit` kept (in the pieces' original order), how many of each section it left out, and the
    tokens of what it kept."""

    kept: list[Piece]
    left_out: dict[str, int]
    tokens: int

    def has(self, piece: Piece) -> bool:
        return any(p is piece for p in self.kept)


def fit(pieces: Sequence[Piece], budget: int, counts: Sequence[int]) -> Fitted:
    """Keep the required pieces, then the others by priority (ties in order) while the total stays within
    ``budget`` tokens; a piece that does not fit is skipped and smaller ones after it are still tried.
    ``counts`` are the pieces' tokens."""
    order = sorted(range(len(pieces)), key=lambda i: (not pieces[i].required, pieces[i].priority, i))
    kept: set[int] = set()
    total = 0
    for i in order:
        cost = counts[i] + JOIN_SLACK
        if pieces[i].required or total + cost <= budget:
            kept.add(i)
            total += cost
    left_out: dict[str, int] = {}
    for i, piece in enumerate(pieces):
        if i not in kept:
            left_out[piece.section] = left_out.get(piece.section, 0) + 1
    return Fitted([pieces[i] for i in sorted(kept)], left_out, total)
