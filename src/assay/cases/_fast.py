"""The fast path of native cases: a well-formed case built in one pydantic call, its checks shared.

Tens of thousands of cases are common, so the usual case (a mapping of known fields with the right types,
checks in the full ``{type, value, ...}`` form) is built with as little Python around pydantic as
possible. Anything else gives None, and the careful path of :mod:`assay.cases.native` reads the case
field by field, converting what it converts and naming the field it refuses.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any

from pydantic import ValidationError

from assay.cases._common import CHECK_FIELDS, Loc
from assay.checks import CHECKS
from assay.checks.base import CheckSpecError, build_check
from assay.model import Case, CheckSpec
from assay.registry import UnknownName

_CHECK_KEYS = frozenset(CHECK_FIELDS)
# An id the careful path would take as it is: no surrounding whitespace to strip, 1 to 200 characters,
# none of them a slash, a backslash or a control character (``.`` and ``..`` are tested apart).
_PLAIN_ID = re.compile(r"[^\s/\\\x00-\x1f](?:[^/\\\x00-\x1f]{0,198}[^\s/\\\x00-\x1f])?")
_DOTS = frozenset({".", ".."})
# Straight to pydantic-core: model_validate adds a Python call per case.
_validate_case = Case.__pydantic_validator__.validate_python
_validate_spec = CheckSpec.__pydantic_validator__.validate_python


class SpecCache:
    """One file's check entries already validated, so that thousands of cases repeating a check share one
    spec (time and memory), and the check types whose ``{type, value}`` entries were found valid with a
    string value (:attr:`assay.checks.base.Check.text_value`)."""

    def __init__(self) -> None:
        self.specs: dict[Hashable, CheckSpec] = {}
        self.text_types: set[str] = set()


def spec_key(entry: dict[str, Any]) -> Hashable | None:
    """The entry's fields as a hashable key (None when a value is a list or mapping). The type is part of it:
    1, 1.0 and True are equal in Python but not as JSON values. The common ``{type, value}`` of two strings
    is keyed by the pair alone (a key is made per check of every case)."""
    if len(entry) == 2:
        kind, value = entry.get("type"), entry.get("value")
        if type(kind) is str and type(value) is str:
            return kind, value
    try:
        return frozenset((k, type(v), v) for k, v in entry.items())
    except TypeError:
        return None


def _new_spec(
    entry: dict[str, Any], key: Hashable | None, cache: SpecCache, loc: Loc, index: int
) -> CheckSpec | None:
    """An entry not seen before in the file, validated (a bad value raises, naming it) and remembered."""
    if not entry.keys() <= _CHECK_KEYS or entry.get("type") not in CHECKS:
        return None
    try:
        spec: CheckSpec = _validate_spec(entry, strict=True)
    except ValidationError:
        return None
    plain_text = type(key) is tuple and bool(spec.value)  # a {type, value} entry of two strings
    if not (plain_text and spec.type in cache.text_types):
        try:
            check = build_check(spec)
        except (UnknownName, CheckSpecError) as exc:
            raise loc.at("checks", index).error(str(exc)) from None
        if plain_text and check.text_value:
            cache.text_types.add(spec.type)
    if key is not None:
        cache.specs[key] = spec
    return spec


def fast_case(data: Any, loc: Loc, source: str, cache: SpecCache, fields: frozenset[str]) -> Case | None:
    """The case ``data`` describes when it takes the fast path (only keys in ``fields``), else None."""
    if type(data) is not dict or not data.keys() <= fields:
        return None
    ident = data.get("id")
    if type(ident) is not str or _PLAIN_ID.fullmatch(ident) is None or ident in _DOTS:
        return None
    specs: list[CheckSpec | dict[str, Any]] = []
    # New {type, value} entries of a type that takes any non-empty text: pydantic builds them with the case.
    text_entries: list[tuple[int, Hashable]] = []
    checks = data.get("checks")
    if checks:
        if type(checks) is not list:
            return None
        known = cache.specs
        for index, entry in enumerate(checks):
            if type(entry) is not dict:
                return None
            # spec_key's common case inline: this runs for every check of every case.
            kind, value = entry.get("type"), entry.get("value")
            if len(entry) == 2 and type(kind) is str and type(value) is str:
                key: Hashable | None = (kind, value)
            else:
                key = spec_key(entry)
            spec = known.get(key) if key is not None else None
            if spec is None:
                if type(key) is tuple and value and kind in cache.text_types:
                    text_entries.append((index, key))
                    specs.append(entry)
                    continue
                if (spec := _new_spec(entry, key, cache, loc, index)) is None:
                    return None
            specs.append(spec)
    # ``data`` is changed in place (a copy costs more than the row), and put back if the careful path needs it.
    had_checks = "checks" in data
    data["checks"], data["source"] = specs, source
    try:
        # Validated specs pass through as they are (pydantic does not copy model instances).
        case: Case | None = _validate_case(data, strict=True)
    except ValidationError:
        case = None
    if case is not None:
        for index, key in text_entries:
            cache.specs[key] = case.checks[index]
    if case is None or (case.input is None and not case.vars):
        del data["source"]
        if had_checks:
            data["checks"] = checks
        else:
            del data["checks"]
        return None
    return case
