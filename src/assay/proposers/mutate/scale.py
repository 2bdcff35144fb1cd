"""The scale of the numbers a task's dev cases carry, at which an operator draws its new constants.

The growing operators draw new constants from fixed palettes (:mod:`~assay.proposers.mutate.python_grow_ops`)
that fit data whose typical number is between 1 and 100: bin sizes of 150, weights of 5 to 60. Nothing in a
program says what scale its inputs have, but a dev case's vars, which a proposer may see, often do: fractional
items of 0.2 to 0.6 in bins of 1.0, coordinates in the unit square, amounts in the tens of thousands. There a
band drawn from the palette (``0 < remaining - item - 0.1 < 4.9``) covers every value the subject takes and never
splits anything, and tuning, which searches from the drawn value, seldom travels the decades to where a band
would. :func:`data_scale` reads the typical size of those numbers; inside :func:`constants_at` the palettes move
to it. Within the palettes' own span nothing changes.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from assay.proposers.mutate.base import excluded_name

# The typical numbers the fixed palettes fit: outside this span, new constants move to the data's scale.
OWN_SPAN = (1.0, 100.0)
FARTHEST = (1e-12, 1e12)  # a scale is taken no farther out: the palettes stay finite numbers a float can hold
MAX_NUMBERS = 100_000  # enough to judge a scale by; the cases' numbers past it are not read
_SCALE: ContextVar[float | None] = ContextVar("assay_data_scale", default=None)


def data_scale(cases: Iterable[Mapping[str, Any]]) -> float | None:
    """The median magnitude of the non-zero numbers in ``cases`` (each a case's vars, read into nested lists and
    mappings; booleans, strings, infinities and NaN left out, and what a key names a seed, an id, an index or a
    version holds: ``{"seed": 7003}`` says nothing of the data), no farther out than ``FARTHEST``, or None when
    there are none or when it lies within ``OWN_SPAN``, where the fixed palettes already fit."""
    sizes = [abs(x) for x in _numbers(list(cases))]
    sizes = [x for x in sizes if x and math.isfinite(x)]
    if not sizes:
        return None
    median = float(statistics.median(sizes))
    low, high = OWN_SPAN
    if low <= median <= high:
        return None
    return min(max(median, FARTHEST[0]), FARTHEST[1])


def current_scale() -> float | None:
    """The scale the operators draw new constants at (see :func:`constants_at`), None for the fixed palettes."""
    return _SCALE.get()


@contextmanager
def constants_at(scale: float | None) -> Iterator[None]:
    """Within the block, operators draw their new constants at ``scale`` (None: from the fixed palettes)."""
    token = _SCALE.set(scale)
    try:
        yield
    finally:
        _SCALE.reset(token)


def scaled(palette: tuple[float, ...], factor: float, *, whole: bool) -> tuple[float, ...] | tuple[int, ...]:
    """``palette`` times ``factor``, rounded to two significant digits (whole numbers when ``whole``), without
    repeats: a drawn constant reads as a round number, as the fixed palettes' do."""
    moved = [float(f"{c * factor:.2g}") for c in palette]
    if whole:
        return tuple(dict.fromkeys(max(2, round(c)) for c in moved))
    return tuple(dict.fromkeys(moved))


def _numbers(values: list[Any]) -> Iterator[float]:
    """The numbers in ``values``, read into nested lists and mappings, at most ``MAX_NUMBERS`` of them."""
    seen = 0
    stack = list(reversed(values))
    while stack and seen < MAX_NUMBERS:
        value = stack.pop()
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            seen += 1
            try:
                number = float(value)
            except OverflowError:  # an int too large for a float says nothing a palette could use
                continue
            yield number
        elif isinstance(value, Mapping):  # a seed or an id says nothing of the data's scale
            stack.extend(v for k, v in value.items() if not (isinstance(k, str) and excluded_name(k)))
        elif isinstance(value, list | tuple):
            stack.extend(value)
