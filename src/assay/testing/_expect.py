"""What the suites fail with: an AssertionError whose message names the family and the part of its contract
that failed (a bare ``assert`` outside pytest says nothing, and ``python -O`` drops it)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

from assay.registry import ExtensionError, Family, conform

T = TypeVar("T")


def expect(condition: object, message: str) -> None:
    """Fail with ``message`` unless ``condition`` holds."""
    if not condition:
        raise AssertionError(message)


def close(a: float, b: float, *, abs: float = 1e-12, rel: float = 1e-6) -> bool:
    """``a`` and ``b`` equal within ``rel`` (relative) or ``abs`` (absolute), as ``pytest.approx`` takes them."""
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs)


def conformed(family: Family[T], obj: object, who: str) -> T:
    """``obj`` as a member of ``family`` (:func:`assay.registry.conform`), or the failure saying why not."""
    try:
        return conform(family, obj)
    except ExtensionError as exc:
        raise AssertionError(f"{who}: does not conform to the {family.name} protocol: {exc}") from None


def refused(error: type[BaseException], match: str, call: Callable[[], Any], message: str) -> BaseException:
    """The ``error`` that ``call()`` raises, whose text matches the regex ``match``; else fail with ``message``
    and what happened instead."""
    try:
        call()
    except error as exc:
        expect(re.search(match, str(exc)), f"{message}: it says {str(exc)!r}, which does not match {match!r}")
        return exc
    except Exception as exc:
        raise AssertionError(f"{message}: it raised {type(exc).__name__}: {exc}") from exc
    raise AssertionError(f"{message}: nothing was raised")


def one_line(text: object) -> bool:
    """A non-empty string of one line."""
    return isinstance(text, str) and bool(text.strip()) and "\n" not in text
