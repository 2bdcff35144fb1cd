"""assay's native case format, in YAML, JSON or JSONL.

A file is a list of cases, or a mapping with a ``cases:`` list (and an optional ``description``). JSONL
holds one case object per line (blank lines are skipped). One case::

    id: refund-policy            # required; a string (integers are converted)
    input: "Can I get a refund?" # the text given to the runner ...
    vars: {lang: en}             # ... and/or named variables (templates use {vars.lang})
    expected: "Yes, within 30 days."   # optional reference answer (numbers are converted to text)
    checks:
      - {type: contains, value: "30 days", weight: 2}
      - contains: refund          # shorthand: the one key that is not a check field is the type
      - not_contains: "sorry"     # a not_ / not- prefix negates (unless that full name is a check type)
      - {type: llm_judge, value: "Answers politely", threshold: 0.7}
      - json_valid                # a bare type name for checks without a value
    tags: [billing]
    weight: 1.0                   # the case's weight in aggregate scores
    threshold: 0.8                # weighted check score needed to pass (default: every check passes)
    files: [fixtures/order.json]  # input files the runner needs
    description: "free text, ignored"

Check fields: ``type``, ``value``, ``weight``, ``threshold``, ``negate``, ``options``, ``text``.
Either ``input`` or ``vars`` is required.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.cases._common import (
    CHECK_FIELDS,
    Loc,
    case_id,
    expect_list,
    expect_mapping,
    json_error,
    native_check,
    number,
    optional_str,
    str_list,
    type_name,
    validate_check,
)
from assay.model import Case, CheckSpec
from assay.safeload import load_json

CASE_FIELDS = (
    "id",
    "input",
    "vars",
    "expected",
    "checks",
    "tags",
    "weight",
    "threshold",
    "files",
    "description",
)
_FAST_FIELDS = frozenset(CASE_FIELDS) - {"description"}
_CHECK_KEYS = frozenset(CHECK_FIELDS)


# Per file: check entries already validated, by their fields (when every value is a plain scalar), so that
# thousands of cases repeating the same check share one validated spec (time and memory).
SpecCache = dict[frozenset[tuple[str, type, Any]], CheckSpec]


def _spec_key(entry: dict[str, Any]) -> frozenset[tuple[str, type, Any]] | None:
    """The entry's fields as a hashable key (None when a value is a list or mapping). The type is part of it:
    1, 1.0 and True are equal in Python but not as JSON values."""
    try:
        return frozenset((k, type(v), v) for k, v in entry.items())
    except TypeError:
        return None


def _fast_case(data: Any, loc: Loc, source: str, shared: SpecCache) -> Case | None:
    """The common, well-formed case validated in one pydantic call (several times faster at thousands of
    cases); anything unusual returns None and takes the careful path, which names the offending field."""
    if not isinstance(data, dict) or not data.keys() <= _FAST_FIELDS or not isinstance(data.get("id"), str):
        return None
    checks = data.get("checks") or []
    if not isinstance(checks, list):
        return None
    from assay.checks import CHECKS

    specs: list[CheckSpec] = []
    for index, entry in enumerate(checks):
        if not isinstance(entry, dict) or not entry.keys() <= _CHECK_KEYS or entry.get("type") not in CHECKS:
            return None
        key = _spec_key(entry)
        spec = shared.get(key) if key is not None else None
        if spec is None:
            try:
                spec = CheckSpec.model_validate(entry, strict=True)
            except ValidationError:
                return None
            validate_check(spec, loc.at("checks", index))
            if key is not None:
                shared[key] = spec
        specs.append(spec)
    try:
        # Validated specs pass through as they are (pydantic does not copy model instances).
        case = Case.model_validate({**data, "checks": specs, "source": source}, strict=True)
    except ValidationError:
        return None
    if case.input is None and not case.vars:
        return None
    case_id(case.id, loc.at("id"))
    return case


def parse_case(data: Any, loc: Loc, shared: SpecCache | None = None) -> Case:
    """Parse and validate one native case mapping. ``shared`` lets the cases of one file share their
    identical check specs."""
    source = str(loc.file)
    fast = _fast_case(data, loc, source, {} if shared is None else shared)
    if fast is not None:
        return fast
    data = expect_mapping(data, loc, "a case (a mapping with id, input, checks, ...)")
    for key in data:
        if key not in CASE_FIELDS:
            raise loc.at(str(key)).error(
                f"unknown case field {key!r}; expected one of {', '.join(CASE_FIELDS)}"
            )
    if "id" not in data:
        raise loc.at("id").error("required field is missing")
    fields: dict[str, Any] = {"id": case_id(data["id"], loc.at("id")), "source": source}
    fields["input"] = optional_str(data, "input", loc)
    if data.get("vars") is not None:
        fields["vars"] = expect_mapping(data["vars"], loc.at("vars"))
    if fields["input"] is None and not fields.get("vars"):
        raise loc.at("input").error("required field is missing (give 'input' text or 'vars')")
    expected = data.get("expected")
    if isinstance(expected, int | float) and not isinstance(expected, bool):
        expected = str(expected)
    if expected is not None and not isinstance(expected, str):
        raise loc.at("expected").error(f"expected a string, got {type_name(expected)}")
    fields["expected"] = expected
    checks = expect_list(data.get("checks") or [], loc.at("checks"), "a list of checks")
    fields["checks"] = [native_check(entry, loc.at("checks", i)) for i, entry in enumerate(checks)]
    fields["tags"] = str_list(data.get("tags"), loc.at("tags"))
    fields["files"] = str_list(data.get("files"), loc.at("files"))
    if data.get("weight") is not None:
        fields["weight"] = number(data["weight"], loc.at("weight"))
        if fields["weight"] < 0:
            raise loc.at("weight").error("expected a number >= 0")
    if data.get("threshold") is not None:
        fields["threshold"] = number(data["threshold"], loc.at("threshold"))
        if not 0 <= fields["threshold"] <= 1:
            raise loc.at("threshold").error("expected a number between 0 and 1")
    fields["description"] = optional_str(data, "description", loc)
    return Case(**fields)


def parse_document(data: Any, file: Path) -> list[tuple[Case, Loc]]:
    """Parse a native YAML/JSON document: a list of cases or ``{cases: [...]}``."""
    loc = Loc(file)
    if isinstance(data, dict):
        extra = [k for k in data if k not in ("cases", "description")]
        if extra:
            raise loc.at(str(extra[0])).error(f"unknown top-level field {extra[0]!r}; expected 'cases'")
        loc = loc.at("cases")
        data = data.get("cases")
    items = expect_list(data, loc, "a list of cases")
    shared: SpecCache = {}
    return [(parse_case(item, loc.at(i), shared), loc.at(i)) for i, item in enumerate(items)]


def looks_native(data: Any) -> bool:
    """Whether a document reads as assay's own format: a list of cases (or ``{cases: [...]}``) whose entries
    use only native fields, or at least none of the fields of evals written for skills (``prompt``,
    ``assertions``, ...), so that a typo in a native file is reported as one."""
    from assay.cases.skill_creator import EVAL_KEYS

    extra = False
    if isinstance(data, dict):
        extra = not data.keys() <= {"cases", "description"}
        data = data.get("cases")
    if not isinstance(data, list):
        return not extra
    entries = [item for item in data if isinstance(item, dict)]
    if all(entry.keys() <= set(CASE_FIELDS) for entry in entries):
        return True  # a native file with an unknown top-level field is reported as one
    return not any(key in EVAL_KEYS for entry in entries for key in entry)


def read_jsonl(text: str, file: Path) -> list[tuple[Any, Loc]]:
    """The JSON value of each non-blank line, with its location (``line 3``); errors name the line."""
    out = []
    for number_, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        loc = Loc(file, prefix=f"line {number_}")
        try:
            data = load_json(line)
        except json.JSONDecodeError as exc:
            raise loc.error(f"invalid JSON: column {exc.colno}: {exc.msg}") from None
        except ValueError as exc:
            raise json_error(exc, loc) from None
        out.append((data, loc))
    return out


def parse_jsonl(text: str, file: Path) -> list[tuple[Case, Loc]]:
    """Parse JSONL: one case object per line; errors name the line number."""
    return parse_rows(read_jsonl(text, file))


def parse_rows(rows: list[tuple[Any, Loc]]) -> list[tuple[Case, Loc]]:
    """Parse native case objects with their locations; identical check specs are validated once and shared."""
    shared: SpecCache = {}
    return [(parse_case(data, loc, shared), loc) for data, loc in rows]
