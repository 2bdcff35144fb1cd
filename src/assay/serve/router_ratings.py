"""The semantic router's ``elo_ratings.json``, read as the router reads it, to start ``assay serve`` from.

The file holds ``version``, ``last_updated``, ``global_ratings`` (model -> record) and ``category_ratings``
(decision -> model -> record); a record is ``{"model", "rating", "comparisons", "wins", "losses", "ties"}``.
As the router does when it loads the file, a null record is dropped, a rating is clamped to 100..3000 and a
negative count becomes 0.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import AssayError
from assay.serve.errors import ApiError
from assay.serve.validation import category_name, variant_name

RATING_FLOOR = 100.0
RATING_CEILING = 3000.0
COUNTS = ("comparisons", "wins", "losses", "ties")
_GLOBAL_KEY = "_global"


@dataclass(frozen=True)
class RouterRating:
    """One imported rating: ``category`` None for the global rating."""

    model: str
    category: str | None
    rating: float
    comparisons: int
    wins: int
    losses: int
    ties: int


def clamp(rating: float) -> float:
    """The router's bounds on a stored rating."""
    return min(max(rating, RATING_FLOOR), RATING_CEILING)


def load_router_ratings(path: Path) -> list[RouterRating]:
    """Every rating in the router's file at ``path``; a malformed file is a one-line :class:`AssayError`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except OSError as exc:
        raise AssayError(f"{path}: cannot read the ratings file ({exc.strerror or exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise AssayError(f"{path}: not a JSON ratings file ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise AssayError(f"{path}: expected an object with global_ratings and category_ratings")
    out = _records(path, "global_ratings", data.get("global_ratings"), None)
    categories = data.get("category_ratings") or {}
    if not isinstance(categories, dict):
        raise AssayError(f"{path}: category_ratings: expected an object (decision -> model -> rating)")
    for raw, records in sorted(categories.items()):
        where = f"category_ratings.{raw}"
        category = None if raw == _GLOBAL_KEY else _checked(path, where, category_name, raw)
        out += _records(path, where, records, category)
    return out


def _records(path: Path, where: str, records: Any, category: str | None) -> list[RouterRating]:
    if records is None:
        return []
    if not isinstance(records, dict):
        raise AssayError(f"{path}: {where}: expected an object (model -> rating)")
    out = []
    for key, record in sorted(records.items()):
        if record is None:
            continue
        at = f"{where}.{key}"
        if not isinstance(record, dict):
            raise AssayError(f"{path}: {at}: expected an object with model and rating")
        model = _checked(path, f"{at}.model", variant_name, str(record.get("model") or key))
        rating = record.get("rating")
        if isinstance(rating, bool) or not isinstance(rating, int | float) or not math.isfinite(rating):
            raise AssayError(f"{path}: {at}.rating: expected a finite number, got {rating!r}")
        counts = {}
        for name in COUNTS:
            value = record.get(name, 0)
            if isinstance(value, bool) or not isinstance(value, int):
                raise AssayError(f"{path}: {at}.{name}: expected a whole number, got {value!r}")
            counts[name] = max(value, 0)
        out.append(RouterRating(model=model, category=category, rating=clamp(float(rating)), **counts))
    return out


def _checked(path: Path, where: str, check: Callable[[str, str], str | None], value: str) -> Any:
    try:
        return check(value, where)
    except ApiError as exc:
        raise AssayError(f"{path}: {where}: {exc.message.split(': ', 1)[-1]}") from None
