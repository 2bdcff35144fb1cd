"""Syntax checks: Python parses, JSON / JSON Lines / YAML / TOML load. Errors carry the line."""

from __future__ import annotations

import ast
import json
import re
import tomllib
import warnings
from collections.abc import Callable
from pathlib import PurePosixPath

import yaml

from assay.safeload import check_yaml_documents, load_json
from assay.static.report import Finding, Severity
from assay.static.structure import ArtifactFile

# Which file types an artifact kind owns: a syntax error there is critical, elsewhere a warning.
OWNED_SUFFIXES: dict[str, frozenset[str]] = {
    "code": frozenset({".py"}),
    "config": frozenset({".json", ".jsonl", ".yaml", ".yml", ".toml"}),
}
TOML_LINE = re.compile(r"at line (\d+)")

ParseError = tuple[int | None, str]


def _python(text: str) -> ParseError | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like are not syntax errors
            ast.parse(text)
    except SyntaxError as exc:
        return exc.lineno, f"Python syntax error: {exc.msg}"
    except ValueError as exc:  # NUL bytes and similar
        return None, f"Python cannot parse: {exc}"
    return None


def _json(text: str) -> ParseError | None:
    try:
        load_json(text)
    except json.JSONDecodeError as exc:
        return exc.lineno, f"invalid JSON: {exc.msg}"
    except ValueError as exc:  # too deep, or a number too long
        return None, f"invalid JSON: {exc}"
    return None


def _jsonl(text: str) -> ParseError | None:
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                load_json(line)
            except json.JSONDecodeError as exc:
                return number, f"invalid JSON line: {exc.msg}"
            except ValueError as exc:
                return number, f"invalid JSON line: {exc}"
    return None


def _yaml(text: str) -> ParseError | None:
    try:
        check_yaml_documents(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return (mark.line + 1 if mark is not None else None), f"invalid YAML: {problem}"
    return None


def _toml(text: str) -> ParseError | None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = TOML_LINE.search(str(exc))
        message = TOML_LINE.sub("", str(exc)).replace("(, column", "(column").strip()
        return (int(found.group(1)) if found else None), f"invalid TOML: {message}"
    return None


PARSERS: dict[str, Callable[[str], ParseError | None]] = {
    ".py": _python,
    ".json": _json,
    ".jsonl": _jsonl,
    ".yaml": _yaml,
    ".yml": _yaml,
    ".toml": _toml,
}


def check_syntax(files: list[ArtifactFile], kind: str) -> list[Finding]:
    """Parse every file of a known type; critical when the artifact kind owns the type, else a warning."""
    owned = OWNED_SUFFIXES.get(kind, frozenset())
    findings: list[Finding] = []
    for item in files:
        suffix = PurePosixPath(item.rel).suffix.lower()
        parser = PARSERS.get(suffix)
        if parser is None or item.text is None or not item.text.strip():
            continue
        error = parser(item.text)
        if error is not None:
            severity: Severity = "critical" if suffix in owned else "warning"
            line, message = error
            findings.append(
                Finding(severity=severity, rule="syntax", file=item.rel, line=line, message=message)
            )
    return findings
