"""Shared pieces of the case loaders: error locations, file reading, check specs and case ids."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from assay.config import describe_error, read_yaml
from assay.errors import ConfigError, field_path
from assay.fsutil import BOM, read_user_lines, read_user_text
from assay.limits import MAX_FILE_BYTES
from assay.model import CheckSpec
from assay.safeload import LIMIT_NOTE, NestingError, load_json

CHECK_FIELDS = ("type", "value", "weight", "threshold", "negate", "options", "text")
NEGATION_PREFIXES = ("not_", "not-")
_ID_FORBIDDEN = re.compile(r"[/\\\x00-\x1f]")


class Loc(NamedTuple):
    """Where a value sits: a file, an optional prefix (``line 3`` in JSONL) and a path inside the value.

    A NamedTuple because one is made per field of every case loaded (cheap to create)."""

    file: Path | None
    parts: tuple[str | int, ...] = ()
    prefix: str = ""

    def at(self, *parts: str | int) -> Loc:
        return Loc(self.file, self.parts + parts, self.prefix)

    @property
    def field(self) -> str | None:
        inner = field_path(list(self.parts))
        if self.prefix and inner:
            return f"{self.prefix}: {inner}"
        return self.prefix or inner or None

    def error(self, message: str) -> ConfigError:
        return ConfigError(message, file=self.file, field=self.field)


def type_name(value: object) -> str:
    """A short, user-facing name of a value's type (YAML/JSON vocabulary)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return type(value).__name__


def read_text(path: Path, max_bytes: int = MAX_FILE_BYTES, what: str = "case and config files") -> str:
    """Read a UTF-8 regular file of at most ``max_bytes``; anything else becomes a one-line ConfigError."""
    return read_user_text(path, max_bytes, limit_note=f"{LIMIT_NOTE} for {what}")


def read_lines(
    path: Path, max_bytes: int = MAX_FILE_BYTES, what: str = "case and config files"
) -> Iterator[str]:
    """The lines of a UTF-8 regular file of at most ``max_bytes``, read one at a time (JSONL); anything
    unreadable becomes a one-line ConfigError when reached."""
    return read_user_lines(path, max_bytes, limit_note=f"{LIMIT_NOTE} for {what}")


def parse_json(text: str, loc: Loc) -> Any:
    """Parse JSON text; a syntax error names the line and column, too deep nesting the field."""
    try:
        return load_json(text)
    except json.JSONDecodeError as exc:
        raise loc.error(f"invalid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except ValueError as exc:
        raise json_error(exc, loc) from None


def json_error(exc: ValueError, loc: Loc) -> ConfigError:
    """The error for JSON that parses but is refused: nested too deep (naming where) or a number too long."""
    inner = exc.field if isinstance(exc, NestingError) else None
    field = ": ".join(part for part in (loc.field, inner) if part) or None
    return ConfigError(f"invalid JSON: {exc}", file=loc.file, field=field)


def read_data(path: Path) -> Any:
    """Read a JSON (``.json``) or YAML (anything else) file; YAML by the 1.2 core schema (``Yes``, ``No``,
    ``on`` and ``off`` stay strings, as promptfoo and JSON-minded authors expect)."""
    if path.suffix.lower() == ".json":
        # A byte-order mark (Notepad, Excel) signs the encoding; it is not part of the document (RFC 8259 lets
        # a parser ignore it), and YAML's reader already skips one.
        return parse_json(read_text(path).removeprefix(BOM), Loc(path))
    return read_yaml(path, core_schema=True)


def parse_yaml_text(text: str, loc: Loc) -> Any:
    """A YAML (or JSON) string held in a field, parsed by the YAML 1.2 core schema; errors name the field."""
    import yaml

    from assay.safeload import describe_yaml_error, load_yaml

    try:
        return load_yaml(text, core_schema=True)
    except yaml.YAMLError as exc:
        raise loc.error(f"invalid YAML: {describe_yaml_error(exc)}") from None


class Notes:
    """Warnings raised while loading case files: something read differently from how its author may expect,
    a field that is not used, a feature assay does not have. Each is one line naming the file and field;
    the same message in one file is reported once, with how many more places it applies to."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str | None, str], list[Any]] = {}

    def warn(self, loc: Loc, message: str) -> None:
        key = (str(loc.file) if loc.file is not None else None, message)
        entry = self._seen.get(key)
        if entry is None:
            self._seen[key] = [loc.field, 1]
        else:
            entry[1] += 1

    def lines(self, file: Path | str | None = None) -> list[str]:
        """The warnings (of one file when given), in the order first raised."""
        out = []
        for (name, message), (field, count) in self._seen.items():
            if file is not None and name != str(file):
                continue
            more = f" (and {count - 1} more like it)" if count > 1 else ""
            out.append(ConfigError(message + more, file=name, field=field).render())
        return out


def expect_mapping(value: Any, loc: Loc, what: str = "a mapping") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise loc.error(f"expected {what}, got {type_name(value)}")
    return value


def expect_list(value: Any, loc: Loc, what: str = "a list") -> list[Any]:
    if not isinstance(value, list):
        raise loc.error(f"expected {what}, got {type_name(value)}")
    return value


def optional_str(data: Mapping[str, Any], key: str, loc: Loc) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise loc.at(key).error(f"expected a string, got {type_name(value)}")
    return value


def str_list(value: Any, loc: Loc) -> list[str]:
    """A list of strings; a single string is accepted as a list of one."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    items = expect_list(value, loc, "a list of strings")
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise loc.at(i).error(f"expected a string, got {type_name(item)}")
    return list(items)


def number(value: Any, loc: Loc) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise loc.error(f"expected a number, got {type_name(value)}")
    try:
        result = float(value)
    except OverflowError:  # an integer beyond float's range
        result = math.inf
    if not math.isfinite(result):
        raise loc.error("must be a finite number")
    return result


def case_id(value: Any, loc: Loc) -> str:
    """Validate a case id: a non-empty string (integers are converted) usable as a file name."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise loc.error(f"expected a string or integer id, got {type_name(value)}")
    text = str(value).strip()
    if (problem := id_problem(text)) is not None:
        raise loc.error(problem)
    return text


def id_problem(text: str) -> str | None:
    """Why a (stripped) case id cannot be used, or None."""
    if not text:
        return "case id is empty"
    if text in (".", "..") or _ID_FORBIDDEN.search(text) or len(text) > 200:
        return (
            f"invalid case id {text!r}: ids name trace files, so no '/', '\\', control characters or '..', "
            "and at most 200 characters"
        )
    return None


def slugify(text: str) -> str:
    """``"Greets the user, politely!"`` → ``greets-the-user-politely`` (at most 60 characters)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:60].rstrip("-")


def split_negation(kind: str, negate: bool) -> tuple[str, bool]:
    """Resolve a type name: ``-`` may stand for ``_`` (``starts-with``), and a ``not_`` / ``not-`` prefix
    becomes ``negate`` unless the full name is itself a check type (``not_contains``)."""
    from assay.checks import CHECKS

    for name in (kind, kind.replace("-", "_")):
        if name in CHECKS:
            return name, negate
    for prefix in NEGATION_PREFIXES:
        if kind.startswith(prefix) and len(kind) > len(prefix):
            rest = kind[len(prefix) :]
            return (rest.replace("-", "_") if rest.replace("-", "_") in CHECKS else rest), not negate
    return kind, negate


def make_spec(fields: dict[str, Any], loc: Loc) -> CheckSpec:
    """Build a CheckSpec and validate it against its implementation; errors name the offending field."""
    try:
        spec = CheckSpec.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = loc.at(*(p for p in first.get("loc", ()) if isinstance(p, str | int)))
        raise where.error(describe_error(first)) from None
    validate_check(spec, loc)
    return spec


def native_check(entry: Any, loc: Loc) -> CheckSpec:
    """Parse one check in the native form.

    Accepted: ``{type: contains, value: x, ...}``, the shorthand ``{contains: x, weight: 2}`` (the one key
    that is not a check field names the type) and a bare type name such as ``json_valid``.
    """
    if isinstance(entry, str):
        kind, negate = split_negation(entry.strip(), False)
        return make_spec({"type": kind, "negate": negate}, loc)
    data = expect_mapping(entry, loc, "a check (a mapping such as {type: contains, value: ...})")
    fields = {k: v for k, v in data.items() if k in CHECK_FIELDS}
    others = [k for k in data if k not in CHECK_FIELDS]
    if "type" in data:
        if others:
            raise loc.at(others[0]).error(
                f"unknown check field {others[0]!r}; expected one of {', '.join(CHECK_FIELDS)}"
            )
    elif len(others) == 1:
        if "value" in data:
            raise loc.error(
                f"shorthand check {others[0]!r} gives its value twice (as the key and in 'value')"
            )
        fields["type"], fields["value"] = others[0], data[others[0]]
    elif not others:
        raise loc.at("type").error("required field is missing (e.g. {type: contains, value: ...})")
    else:
        raise loc.error(f"expected one check type per entry, got {', '.join(map(repr, others))}")
    kind = fields["type"]
    if not isinstance(kind, str) or not kind.strip():
        raise loc.at("type").error(f"expected a check type name, got {type_name(kind)}")
    negate = fields.get("negate", False)
    if not isinstance(negate, bool):
        raise loc.at("negate").error(f"expected true or false, got {type_name(negate)}")
    fields["type"], fields["negate"] = split_negation(kind.strip(), negate)
    return make_spec(fields, loc)


def validate_check(spec: CheckSpec, loc: Loc) -> None:
    """Build the check once so a bad spec fails at load, naming the file and field."""
    problem = check_problem(spec)
    if problem is not None:
        raise loc.error(problem)


def check_problem(spec: CheckSpec) -> str | None:
    """What is wrong with a spec (an unknown type, a value its check refuses), or None: the check is built
    once to tell."""
    from assay.checks.base import CheckSpecError, build_check
    from assay.registry import UnknownName

    try:
        build_check(spec)
    except (UnknownName, CheckSpecError) as exc:
        return str(exc)
    return None
