"""Shared inputs: a FunSearch-style bin-packing priority function and helpers to compare Python trees."""

from __future__ import annotations

import ast

BINPACK = '''"""FunSearch-style online bin packing: score every bin for the incoming item."""

import numpy as np


def priority(item: float, bins: np.ndarray) -> np.ndarray:
    """Returns a priority for each bin; the item goes into the bin with the highest one."""
    # Leftover space if the item is placed in each bin.
    remaining = bins - item
    scores = -(remaining ** 2) / item  # tight fits score higher
    fits = remaining >= 0
    if np.any(fits) and item > 0.5:
        scores = scores + 1.5 * fits
    else:
        scores = scores - 0.1 * np.arange(len(bins))
    for i in range(len(bins)):
        if remaining[i] < 0.05 or bins[i] == 1.0:
            scores[i] += 2
    return np.where(fits, scores, -np.inf)


def heuristic_name() -> str:
    return "best fit with bonus"
'''


def statements(text: str) -> int:
    """How many statements a module has, at any depth."""
    return sum(isinstance(node, ast.stmt) for node in ast.walk(ast.parse(text)))


def dump(text: str) -> str:
    return ast.dump(ast.parse(text))
