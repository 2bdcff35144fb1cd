"""What a mutation operator returns (``Mutation``), what an operator is (``Operator``) and shared helpers."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from assay.words import cut_at_word

FileKind = str  # "python" | "json" | "yaml" | "toml" | "text"

FLOAT_FACTORS = (0.5, 0.8, 0.9, 1.1, 1.25, 2.0)
SIGN_FLIP_CHANCE = 0.1
EXCLUDED_NAME = re.compile(r"(?:^|[_\W])(?:port|seed|index|idx|id|version|pid|uid|gid)s?(?:$|[_\W])", re.I)


def excluded_name(name: str) -> bool:
    """Whether a key or constant name says its number is not a knob or a measure (a port, seed, index, id,
    version): tuning leaves it alone, and the data's scale is read without it."""
    return bool(EXCLUDED_NAME.search(f"_{name}_"))


@dataclass(frozen=True)
class Mutation:
    """One proposed edit of one file.

    ``path`` is the file's relative path, ``new_text`` its whole new content, ``description`` one line saying
    what changed (for the log and the commit message), ``operator`` the operator's name (``py.constant``),
    ``sites`` what it touched by name (``priority.py:priority``: the function; ``params.json:limits.max``: a key).
    """

    path: str
    new_text: str
    description: str
    operator: str
    sites: tuple[str, ...] = ()


def first_changed_line(old: str, new: str) -> int:
    """The number (from 1) of the first line where ``new`` differs from ``old``."""
    for number, (a, b) in enumerate(zip(old.splitlines(), new.splitlines(), strict=False), 1):
        if a != b:
            return number
    return min(len(old.splitlines()), len(new.splitlines())) + 1


@dataclass(frozen=True)
class Operator:
    """A named edit for one kind of file at one layer. ``apply(path, text, rng)`` returns a mutation that
    changes ``text``, or ``None`` when the operator finds nothing to change in it. ``pack``: the operators it
    is drawn with (``py``, the generic edits of Python; ``py.growth``, terms, guards and wraps with new
    constants; ``py.pairing``, combinations of a function's names; ``cfg``; ``text``; ``fewshot``)."""

    name: str
    kind: FileKind
    layer: int
    apply: Callable[[str, str, random.Random], Mutation | None]
    pack: str = ""


def perturb_number(value: int | float, rng: random.Random) -> int | float:
    """A nearby different number: ints move by ±1 (or ×2, ÷2 when large), floats are scaled by a small
    factor; rarely the sign flips. Never returns ``value`` itself."""
    if value != 0 and rng.random() < SIGN_FLIP_CHANCE:
        return -value
    if isinstance(value, int):
        options = [value + 1, value - 1]
        if abs(value) >= 8:
            options += [value * 2, value // 2]
        return rng.choice(options)
    if value == 0 or not math.isfinite(value):
        return rng.choice((0.1, 0.5, 1.0))
    new = float(f"{value * rng.choice(FLOAT_FACTORS):.6g}")
    return new if new != value else value * 2


def shorten(text: str, limit: int = 48) -> str:
    """``text`` on one line, cut at a word to at most ``limit`` characters, with an ellipsis."""
    return cut_at_word(text, limit)
