"""Read comparison outcomes from CSV or JSONL files (keys a, b, winner, and optional category, weight)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.fsutil import read_user_text
from assay.limits import MAX_FILE_BYTES
from assay.ratings.base import MatchOutcome
from assay.safeload import load_json

REQUIRED = ("a", "b", "winner")
TIE_WORDS = ("", "tie")


def outcome_from_row(row: Mapping[str, Any]) -> MatchOutcome:
    """One outcome from a row: ``winner`` is a name, ``tie``, empty or null (a tie); raises ValueError."""
    missing = [key for key in REQUIRED if key not in row]
    if missing:
        raise ValueError(f"missing {', '.join(missing)} (expected keys a, b, winner[, category, weight])")
    a, b, winner = (_text(row[key], key) for key in REQUIRED)
    category = row.get("category")
    weight = row.get("weight")
    if isinstance(weight, str) and weight.strip() == "":
        weight = None
    try:
        value = 1.0 if weight is None else float(weight)
    except (TypeError, ValueError):
        raise ValueError(f"weight {weight!r} is not a number") from None
    return MatchOutcome(
        a=a,
        b=b,
        winner=None if winner.lower() in TIE_WORDS else winner,
        category=str(category).strip() or None if category is not None else None,
        weight=value,
    )


def _text(value: Any, key: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str | int | float):
        raise ValueError(f"{key} must be a name, got {type(value).__name__}")
    return str(value).strip()


def read_outcomes(path: str | Path) -> list[MatchOutcome]:
    """All outcomes in a ``.csv`` (header a,b,winner[,category,weight]) or ``.jsonl`` file, in file order.

    A malformed row raises ConfigError naming the file and the line.
    """
    path = Path(path)
    if not path.exists():
        raise ConfigError("no such file", file=path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _read_csv(path, read_user_text(path, MAX_FILE_BYTES))
    if suffix in (".jsonl", ".ndjson"):
        return _read_jsonl(path, read_user_text(path, MAX_FILE_BYTES))
    raise ConfigError(f"unknown format {suffix or '(no suffix)'!r}; expected .csv or .jsonl", file=path)


def _read_csv(path: Path, text: str) -> list[MatchOutcome]:
    outcomes: list[MatchOutcome] = []
    with io.StringIO(text, newline="") as handle:
        reader = csv.DictReader(handle)
        fields = [name.strip() for name in reader.fieldnames or []]
        missing = [key for key in REQUIRED if key not in fields]
        if missing:
            raise ConfigError(
                f"header lacks {', '.join(missing)}; expected a,b,winner[,category,weight]",
                file=path,
                field="line 1",
            )
        reader.fieldnames = fields
        for row in reader:
            if None in row or any(value is None for value in row.values()):
                raise ConfigError(
                    f"expected {len(fields)} columns", file=path, field=f"line {reader.line_num}"
                )
            outcomes.append(_parse(row, path, reader.line_num))
    return outcomes


def _read_jsonl(path: Path, text: str) -> list[MatchOutcome]:
    outcomes: list[MatchOutcome] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = load_json(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"invalid JSON: {exc.msg}", file=path, field=f"line {number}") from None
        except ValueError as exc:  # too deep, or a number too long
            raise ConfigError(f"invalid JSON: {exc}", file=path, field=f"line {number}") from None
        if not isinstance(row, dict):
            raise ConfigError("expected a JSON object", file=path, field=f"line {number}")
        outcomes.append(_parse(row, path, number))
    return outcomes


def _parse(row: Mapping[str, Any], path: Path, line: int) -> MatchOutcome:
    try:
        return outcome_from_row(row)
    except ValueError as exc:
        raise ConfigError(str(exc), file=path, field=f"line {line}") from None


def filter_category(outcomes: Sequence[MatchOutcome], category: str | None) -> list[MatchOutcome]:
    """The outcomes of one category (all of them when ``category`` is None)."""
    return [o for o in outcomes if category is None or o.category == category]
