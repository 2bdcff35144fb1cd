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
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from assay.cases._common import (
    Loc,
    case_id,
    expect_list,
    expect_mapping,
    json_error,
    native_check,
    number,
    optional_str,
    read_lines,
    str_list,
    type_name,
)
from assay.cases._fast import SpecCache, fast_case
from assay.fsutil import BOM
from assay.model import Case
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


def parse_case(data: Any, loc: Loc, shared: SpecCache | None = None, source: str | None = None) -> Case:
    """Parse and validate one native case mapping. ``shared`` lets the cases of one file share their
    identical check specs, ``source`` (the file's name, by default ``loc.file``) their source string."""
    source = str(loc.file) if source is None else source
    fast = fast_case(data, loc, source, SpecCache() if shared is None else shared, _FAST_FIELDS)
    return fast if fast is not None else _careful_case(data, loc, source)


def _careful_case(data: Any, loc: Loc, source: str) -> Case:
    """A case read field by field: what the fast path leaves, converted where the format says so (an integer
    id, a numeric ``expected``, shorthand checks) or refused with an error naming the field."""
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
    shared = SpecCache()
    source = str(file)
    return [(parse_case(item, loc.at(i), shared, source), loc.at(i)) for i, item in enumerate(items)]


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


def read_jsonl(file: Path) -> Iterator[tuple[Any, Loc]]:
    """The JSON value of each non-blank line of a JSONL file, with its location (``line 3``), read line by
    line; errors name the line."""
    for line_number, line in enumerate(read_lines(file), 1):
        if line_number == 1:
            line = line.removeprefix(BOM)  # see read_data
        if not line or line.isspace():
            continue
        loc = Loc(file, (), f"line {line_number}")
        try:
            data = load_json(line)
        except json.JSONDecodeError as exc:
            raise loc.error(f"invalid JSON: column {exc.colno}: {exc.msg}") from None
        except ValueError as exc:
            raise json_error(exc, loc) from None
        yield data, loc


def parse_rows(rows: Iterable[tuple[Any, Loc]]) -> list[tuple[Case, Loc]]:
    """Parse native case objects with their locations, one at a time (a stream of JSONL rows is never held
    whole); identical check specs are validated once and shared, and so is each file's source string."""
    shared = SpecCache()
    out: list[tuple[Case, Loc]] = []
    file: Path | None = None
    source = ""
    for data, loc in rows:
        if loc.file is not file:
            file, source = loc.file, str(loc.file)
        case = fast_case(data, loc, source, shared, _FAST_FIELDS)
        out.append((case if case is not None else _careful_case(data, loc, source), loc))
    return out
