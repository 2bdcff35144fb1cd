"""Expectations as skill authors write them, turned into checks.

skill-creator's ``evals.json`` names one field, ``expectations`` (a list of sentences); files found in
public skills also use ``assertions``, ``expected_behavior(s)``, ``must_have``/``must_not_have``,
``rubric``, ``evaluation_criteria`` and more, with entries that are sentences, ``{name, description}``,
``{text}``, ``{id, text}``, ``{type, value|values|pattern}`` or assay check mappings. This module turns one
such entry into a CheckSpec:

- a sentence: the prefix syntax (``[contains] x``, ``[regex] p``, ...; see ``PREFIXES``), else an
  ``llm_judge`` rubric;
- a mapping with a ``type`` naming an assay check (or an alias such as ``content_contains``) and a value:
  that check; a mapping with prose (``text``, ``description``, ``pass_if``, ``check``, ...): the prose as
  above; a mapping with only an author-defined ``type`` and values: a rubric made of them (with a warning).

``CheckSpec.text`` keeps the author's wording for ``grading.json``.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from assay.cases._common import Loc, Notes, make_spec, native_check, split_negation, type_name
from assay.model import CheckSpec

# prefix -> (check type, how the rest of the line becomes the value)
PREFIXES: dict[str, tuple[str, str]] = {
    "contains": ("contains", "text"),
    "not_contains": ("not_contains", "text"),
    "icontains": ("icontains", "text"),
    "equals": ("equals", "text"),
    "starts_with": ("starts_with", "text"),
    "regex": ("regex", "text"),
    "not_regex": ("not_regex", "text"),
    "file_exists": ("file_exists", "text"),
    "json_valid": ("json_valid", "none"),
    "script_check": ("script", "text"),
    "fact_coverage": ("fact_coverage", "facts"),
    "llm_judge": ("llm_judge", "text"),
}
_PREFIX = re.compile(r"^\s*\[([A-Za-z][A-Za-z_\- ]*)\]\s*(.*)$", re.DOTALL)
PROSE_KEYS = (
    "text",
    "pass_if",
    "description",
    "check",
    "criterion",
    "assertion",
    "statement",
    "expectation",
    "requirement",
    "rule",
    "name",
)
VALUE_KEYS = ("value", "values", "pattern", "patterns", "path")
# Author-chosen type names that mean an assay check.
TYPE_ALIASES = {
    "content_contains": "contains",
    "output_contains": "contains",
    "behavior_contains": "contains",
    "content_not_contains": "not_contains",
    "output_not_contains": "not_contains",
    "behavior_not_contains": "not_contains",
    "ordered_content": "ordered",
    "matches": "regex",
    "exact": "equals",
    "exact_match": "equals",
}
# A backslash escape or a construct that only a regular expression would hold.
_REGEX_HINT = re.compile(r"\\[sSdDwWbB.()\[\]{}*+?|^$\\]|\.\*|\.\+|^\^|\$$|\(\?")


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def parse_expectation(text: str, loc: Loc, *, wording: str | None = None) -> CheckSpec:
    """Turn one expectation sentence into a validated CheckSpec (``text`` keeps ``wording`` or the
    sentence)."""
    wording = text if wording is None else wording
    match = _PREFIX.match(text)
    if match is None:
        if not text.strip():
            raise loc.error("empty expectation")
        return make_spec({"type": "llm_judge", "value": text.strip(), "text": wording}, loc)
    prefix = match.group(1).strip().lower().replace("-", "_").replace(" ", "_")
    if prefix not in PREFIXES:
        near = difflib.get_close_matches(prefix, PREFIXES, n=1, cutoff=0.8)
        raise loc.error(
            f"unknown expectation prefix '[{match.group(1)}]'; known: {', '.join(PREFIXES)}"
            + (f" (did you mean [{near[0]}]?)" if near else "")
        )
    kind, shape = PREFIXES[prefix]
    rest = match.group(2).strip()
    value: Any
    if shape == "none":
        value = None
    elif shape == "facts":
        value = [fact.strip() for fact in re.split(r"\s\|\s", f" {rest} ") if fact.strip()]
        if not value:
            raise loc.error(f"[{prefix}] needs at least one fact (separate facts with ' | ')")
    else:
        value = _unquote(rest)
        if not value:
            raise loc.error(f"[{prefix}] needs a value after the prefix")
    kind, negate = split_negation(kind, False)
    return make_spec({"type": kind, "value": value, "negate": negate, "text": wording}, loc)


def looks_like_regex(text: str) -> bool:
    """Whether a must-have string is a regular expression (``module\\s+cnt\\b``) rather than plain text:
    it holds a regex escape or construct and compiles."""
    if not _REGEX_HINT.search(text):
        return False
    try:
        re.compile(text)
    except re.error:
        return False
    return True


def presence_check(text: Any, loc: Loc, *, present: bool) -> CheckSpec:
    """A ``must_have`` (``present``) or ``must_not_have`` string: ``contains`` / ``not_contains``, or a regex
    (negated for must-not) when the string is one."""
    if not isinstance(text, str) or not text.strip():
        raise loc.error(f"expected a non-empty string, got {type_name(text)}")
    if looks_like_regex(text):
        return make_spec({"type": "regex", "value": text, "negate": not present, "text": text}, loc)
    kind = "contains" if present else "not_contains"
    return make_spec({"type": kind, "value": text, "text": text}, loc)


def avoidance_check(text: Any, loc: Loc) -> CheckSpec:
    """A behaviour the output must not show (``fail``, ``forbidden_behaviors``): a rubric saying so."""
    if not isinstance(text, str) or not text.strip():
        raise loc.error(f"expected a non-empty string, got {type_name(text)}")
    rubric = f"The output does not do the following: {text.strip()}"
    return make_spec({"type": "llm_judge", "value": rubric, "text": f"Must not: {text.strip()}"}, loc)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    return json.dumps(value, ensure_ascii=False)


def field_rubric(name: str, value: Any, loc: Loc) -> CheckSpec:
    """An ``expected_<what>`` field (``expected_tool: get_candles``) as a rubric for the judge."""
    label = name.replace("_", " ").strip().capitalize()
    if value is None or value == "" or value == [] or value == {}:
        raise loc.error("expected a value to judge against, got an empty one")
    text = f"{label}: {_as_text(value)}"
    return make_spec({"type": "llm_judge", "value": text, "text": text}, loc)


def _typed_check(kind: str, data: dict[str, Any], loc: Loc, prose: str | None) -> CheckSpec | None:
    """``{type: contains_any, values: [...]}`` and similar as an assay check; None when the type is not
    one assay has or no value is given."""
    from assay.checks import CHECKS

    key = next((k for k in VALUE_KEYS if data.get(k) not in (None, "", [])), None)
    name = TYPE_ALIASES.get(kind.lower().replace("-", "_"), kind.lower().replace("-", "_"))
    if key is None:
        return None
    value = data[key]
    resolved, negate = split_negation(name, False)
    if name == "ordered" and isinstance(value, list) and all(isinstance(v, str) for v in value):
        parts = [v if looks_like_regex(v) else re.escape(v) for v in value]
        resolved, value = "regex", r"[\s\S]*?".join(parts)
    elif key in ("pattern", "patterns") and resolved in ("contains", "not_contains"):
        negate = resolved == "not_contains"
        resolved = "regex"
        if isinstance(value, list):
            value = "|".join(f"(?:{v})" for v in value)
    elif isinstance(value, list) and resolved in ("contains", "not_contains"):
        # several values: all must be there, or none may be
        negate = resolved == "not_contains"
        resolved = "contains_all" if resolved == "contains" else "contains_any"
    if resolved not in CHECKS:
        return None
    fields: dict[str, Any] = {"type": resolved, "value": value, "negate": negate, "text": prose}
    if isinstance(data.get("weight"), int | float) and not isinstance(data.get("weight"), bool):
        fields["weight"] = data["weight"]
    return make_spec(fields, loc)


def mapping_check(data: dict[str, Any], loc: Loc, notes: Notes) -> CheckSpec:
    """One expectation written as a mapping (see the module docstring)."""
    from assay.cases._common import CHECK_FIELDS
    from assay.checks import CHECKS

    kind = data["type"].strip() if isinstance(data.get("type"), str) and data["type"].strip() else None
    if kind is not None and all(k in CHECK_FIELDS for k in data):
        name = split_negation(kind, False)[0]
        if name in CHECKS or difflib.get_close_matches(
            name.replace("-", "_"), CHECKS.names(), n=1, cutoff=0.8
        ):
            return native_check(data, loc)  # an assay check, or a typo of one (reported as such)
    prose = next((data[k] for k in PROSE_KEYS if isinstance(data.get(k), str) and data[k].strip()), None)
    if kind is not None:
        typed = _typed_check(kind, data, loc, prose)
        if typed is not None:
            return typed
    if prose is not None:
        if kind is not None and kind not in ("qualitative", "llm_judge", "rubric", "judge"):
            known = split_negation(TYPE_ALIASES.get(kind, kind), False)[0] in CHECKS
            why = "has no value to check" if known else "is not an assay check"
            notes.warn(loc.at("type"), f"assertion type {kind!r} {why}: its text is judged as a rubric")
        return parse_expectation(prose, loc)
    if kind is not None:
        extra = {k: v for k, v in data.items() if k not in ("type", "id", "weight")}
        rubric = kind.replace("_", " ").capitalize() + (f": {_as_text(extra)}" if extra else "")
        notes.warn(loc.at("type"), f"assertion type {kind!r} is not an assay check: judged as a rubric")
        return make_spec({"type": "llm_judge", "value": rubric, "text": rubric}, loc)
    raise loc.error(
        "expected an expectation: a sentence, a check such as {type: contains, value: ...}, or a mapping "
        f"with one of {', '.join(PROSE_KEYS[:4])}"
    )


def entry_check(entry: Any, loc: Loc, notes: Notes) -> CheckSpec:
    """One entry of ``expectations`` / ``assertions`` / ``expected_behavior`` / ``rubric`` ..."""
    if isinstance(entry, str):
        return parse_expectation(entry, loc)
    if isinstance(entry, dict):
        return mapping_check(entry, loc, notes)
    raise loc.error(f"expected a string (or a check mapping), got {type_name(entry)}")
