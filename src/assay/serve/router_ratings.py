"""The semantic router's ``elo_ratings.json``: read as the router reads it, to start ``assay serve`` from, and
written as the router writes it, to give the ratings back.

The file holds ``version``, ``last_updated``, ``global_ratings`` (model -> record) and ``category_ratings``
(decision -> model -> record); a record is ``{"model", "rating", "comparisons", "wins", "losses", "ties"}``.
As the router does when it loads the file, a null record is dropped, a rating is clamped to 100..3000 and a
negative count becomes 0.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.errors import AssayError
from assay.serve.errors import ApiError
from assay.serve.validation import category_name, variant_name

RATING_FLOOR = 100.0
RATING_CEILING = 3000.0
COUNTS = ("comparisons", "wins", "losses", "ties")
FILE_VERSION = 1
# What Go's encoder escapes in strings beyond JSON's rule (HTML-safe output), as it writes them.
_GO_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)
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
        content = path.read_bytes()
    except OSError as exc:
        raise AssayError(f"{path}: cannot read the ratings file ({exc.strerror or exc})") from None
    return parse_router_ratings(path, content)


def parse_router_ratings(path: Path, content: bytes) -> list[RouterRating]:
    """Every rating in ``content``, the router's file at ``path`` (empty: none), checked as
    :func:`load_router_ratings` checks it."""
    try:
        data = json.loads(content.decode("utf-8") or "{}")
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


def dump_router_ratings(ratings: Iterable[RouterRating], updated: datetime) -> str:
    """The router's file holding ``ratings``, byte for byte as the router saves it (Go's ``json.MarshalIndent``
    with two spaces of its ``StoredRatings``: fields in declaration order, map keys sorted, a whole rating
    without a fraction, no final newline); ``updated`` is its ``last_updated``."""
    global_ratings: dict[str, dict[str, Any]] = {}
    categories: dict[str, dict[str, dict[str, Any]]] = {}
    for item in sorted(ratings, key=lambda r: (r.category or "", r.model)):
        rating = int(item.rating) if float(item.rating).is_integer() else item.rating
        record = {"model": item.model, "rating": rating, **{name: getattr(item, name) for name in COUNTS}}
        if item.category is None:
            global_ratings[item.model] = record
        else:
            categories.setdefault(item.category, {})[item.model] = record
    data = {
        "version": FILE_VERSION,
        "last_updated": go_time(updated),
        "global_ratings": global_ratings,
        "category_ratings": categories,
    }
    text = json.dumps(data, indent=2, ensure_ascii=False)
    for char, escaped in _GO_ESCAPES:
        text = text.replace(char, escaped)  # only strings can hold these characters
    return text


def go_time(moment: datetime) -> str:
    """``moment`` in UTC as Go writes a ``time.Time`` in JSON (RFC 3339, the fraction without trailing zeros)."""
    utc = moment.astimezone(UTC)
    fraction = f"{utc.microsecond:06d}".rstrip("0")
    return f"{utc:%Y-%m-%dT%H:%M:%S}{'.' + fraction if fraction else ''}Z"
