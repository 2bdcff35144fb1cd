"""Structured-output checks: ``json_valid`` and ``json_schema``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError
from assay.checks.text import REGEX_CONCURRENT, REGEX_SECONDS, clip
from assay.errors import ConfigError
from assay.fsutil import read_user_text
from assay.limits import MAX_FILE_BYTES
from assay.model import CheckResult, CheckSpec, Output
from assay.safeload import describe_yaml_error, load_json, load_yaml

FENCE = re.compile(r"\A```[ \t]*(?:json|JSON)?[ \t]*\r?\n(.*?)\r?\n?```\Z", re.DOTALL)
SCHEMA_SUFFIXES = (".json", ".yaml", ".yml")


def extract_json_text(text: str) -> str:
    """The JSON part of an output: the whole text stripped, or the body of a single ```json fenced block."""
    stripped = text.strip()
    fenced = FENCE.match(stripped)
    return fenced.group(1).strip() if fenced else stripped


def parse_json_output(text: str) -> tuple[Any, str | None]:
    """Parse an output as JSON; returns (value, None) or (None, a one-line reason with the offending spot)."""
    body = extract_json_text(text)
    if not body:
        return None, "output is empty"
    try:
        return json.loads(body), None
    except json.JSONDecodeError as exc:
        near = body[max(0, exc.pos - 20) : exc.pos + 20].replace("\n", "\\n")
        return None, f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno} near {near!r}"


def _json_path(parts: Any) -> str:
    path = "$"
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _validators() -> ModuleType:
    """jsonschema's validators, imported when a schema is first used (a tenth of a second at start-up)."""
    from jsonschema import validators

    return validators


_BOUNDED: dict[type, Any] = {}


def schema_validator(schema: dict[str, Any] | bool) -> Any:
    """jsonschema's validator for ``schema``, its ``pattern`` keyword searched as the regex check searches (the
    ``regex`` module, at most ``REGEX_SECONDS`` a string): a pattern that backtracks without end on a string of
    the output fails validation, where ``re`` would hang the run."""
    validators = _validators()
    kind = validators.validator_for(schema)
    bounded = _BOUNDED.get(kind)
    if bounded is None:
        bounded = _BOUNDED[kind] = validators.extend(kind, {"pattern": _bounded_pattern})
    return bounded(schema)


def _bounded_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    import regex
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "string"):
        return
    try:
        found = regex.search(pattern, instance, timeout=REGEX_SECONDS, concurrent=REGEX_CONCURRENT)
    except TimeoutError:
        yield ValidationError(
            f"{clip(repr(instance), 80)}: no answer from {pattern!r} within {REGEX_SECONDS:g} s (the pattern "
            "backtracks too much on it)"
        )
        return
    if found is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _check_schema(schema: Any, where: str) -> dict[str, Any] | bool:
    if not isinstance(schema, dict | bool):
        raise CheckSpecError(
            f"json_schema: {where} must be a JSON schema object, got {type(schema).__name__}"
        )
    from jsonschema import exceptions as schema_errors

    try:
        _validators().validator_for(schema).check_schema(schema)
    except schema_errors.SchemaError as exc:
        at = _json_path(exc.absolute_path)
        raise CheckSpecError(
            f"json_schema: {where} is not a valid schema at {at}: {clip(exc.message, 120)}"
        ) from None
    return schema


def load_schema_file(path: Path) -> dict[str, Any] | bool:
    """Read and validate a schema file (.json, .yaml or .yml); CheckSpecError with the reason otherwise."""
    try:
        raw = read_user_text(path, MAX_FILE_BYTES)
    except ConfigError as exc:
        raise CheckSpecError(f"json_schema: cannot read schema file {str(path)!r}: {exc.message}") from None
    try:
        schema = load_json(raw) if path.suffix == ".json" else load_yaml(raw)
    except (ValueError, yaml.YAMLError) as exc:
        reason = clip(describe_yaml_error(exc) if isinstance(exc, yaml.YAMLError) else str(exc), 120)
        raise CheckSpecError(f"json_schema: schema file {str(path)!r} does not parse: {reason}") from None
    return _check_schema(schema, f"schema file {str(path)!r}")


@CHECKS.register("json_valid")
class JsonValidCheck(Check):
    """The whole output (surrounding whitespace and one ```json fence tolerated) is valid JSON."""

    name = "json_valid"

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        value, error = parse_json_output(output.text)
        if error:
            return self.result(False, evidence=error)
        return self.result(True, evidence=f"valid JSON ({type(value).__name__})")


@CHECKS.register("json_schema")
class JsonSchemaCheck(Check):
    """The output is JSON that validates against ``value``: a schema dict, or the path of a .json/.yaml schema
    file relative to the project directory. A file named by a relative path is read at the first evaluation
    (the project directory is known then) or earlier by ``load_schema(project_dir)``."""

    name = "json_schema"

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self._schema: dict[str, Any] | bool | None = None
        self._path: Path | None = None
        value = spec.value
        if isinstance(value, dict | bool):
            self._schema = _check_schema(value, "value")
        elif isinstance(value, str) and value.strip():
            self._path = Path(value.strip().removeprefix("file://"))
            if self._path.suffix.lower() not in SCHEMA_SUFFIXES:
                raise CheckSpecError(f"json_schema: schema file {value!r} must end in .json, .yaml or .yml")
            if self._path.is_absolute():
                self._schema = load_schema_file(self._path)
        else:
            raise CheckSpecError(
                "json_schema: value is required: a schema object or a .json/.yaml schema file path"
            )

    def prepare(self, project_dir: Path | None) -> None:
        self.load_schema(project_dir)

    def load_schema(self, project_dir: Path | None) -> dict[str, Any] | bool:
        """The schema, reading the file relative to ``project_dir`` (or the current directory) once."""
        if self._schema is None:
            assert self._path is not None
            self._schema = load_schema_file((project_dir or Path.cwd()) / self._path)
        return self._schema

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        try:
            schema = self.load_schema(ctx.project_dir)
        except CheckSpecError as exc:
            return self.result(False, evidence=str(exc))
        value, error = parse_json_output(output.text)
        if error:
            return self.result(False, evidence=error)
        validator = schema_validator(schema)
        errors = sorted(
            validator.iter_errors(value), key=lambda e: (list(map(str, e.absolute_path)), e.message)
        )
        if not errors:
            return self.result(True, evidence="JSON matches the schema")
        first = errors[0]
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        return self.result(False, evidence=clip(f"{_json_path(first.absolute_path)}: {first.message}{more}"))


def json_values_in(text: str, limit: int = 50) -> list[Any]:
    """The JSON objects and arrays found in ``text``, left to right (each the longest that parses at its
    opening brace or bracket; nested ones are not listed again)."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    at = 0
    while len(found) < limit:
        starts = [i for i in (text.find("{", at), text.find("[", at)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            at = start + 1
            continue
        found.append(value)
        at = end
    return found


@CHECKS.register("contains_json")
class ContainsJsonCheck(Check):
    """The output contains a JSON object or array (anywhere, fenced or not) — one that validates against
    ``value`` when a schema is given."""

    name = "contains_json"

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.schema = None if spec.value is None else _check_schema(spec.value, "value")

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        values = json_values_in(output.text)
        if not values:
            return self.result(False, evidence="no JSON found in the output")
        if self.schema is None:
            return self.result(True, evidence=f"{len(values)} JSON value(s) found")
        validator = schema_validator(self.schema)
        first_error = None
        for value in values:
            errors = list(validator.iter_errors(value))
            if not errors:
                return self.result(True, evidence="JSON in the output matches the schema")
            first_error = first_error or errors[0]
        assert first_error is not None
        return self.result(
            False,
            evidence=clip(
                f"no JSON in the output matches the schema: {_json_path(first_error.absolute_path)}: {first_error.message}"
            ),
        )
