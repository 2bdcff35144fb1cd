"""What a proposer must never see, collected generically from the cases, so that any check type — today's and
those a case format adds later (javascript and python assertions, rubric prompts, templated values) — is
covered without a special case."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from assay.model import Case, CheckSpec

_QUOTED = re.compile(r"'([^'\n]{3,})'|\"([^\"\n]{3,})\"|`([^`\n]{3,})`|“([^”\n]{3,})”")
# Tokens of prose and code worth hiding on their own: identifiers, paths, names with digits. (Not capitalised
# words: MUST or NEVER in a rubric would blank every "must" in the outputs.)
_DISTINCT = re.compile(r"[A-Za-z0-9_./:-]*[0-9_/][A-Za-z0-9_./:-]*")
_TEMPLATE = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*(?:\|[^}]*)?\}\}")
# JSON Schema's own vocabulary: hiding every "string" or "object" in outputs would hide nothing.
_SCHEMA_WORDS = {"object", "string", "integer", "number", "array", "boolean", "null", "type", "properties",
                 "required", "items", "enum", "additionalProperties", "description", "title"}  # fmt: skip
_MORE_SCHEMA_KEYWORDS = """
    const pattern format minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minLength maxLength minItems
    maxItems uniqueItems minProperties maxProperties anyOf oneOf allOf not if then else default examples
    definitions patternProperties dependentRequired prefixItems contains propertyNames"""
_SCHEMA_KEYWORDS = _SCHEMA_WORDS | set(_MORE_SCHEMA_KEYWORDS.split())
# Where the keys of a schema's mapping are property names, not schema keywords.
_NAMING = ("properties", "patternProperties", "dependentRequired", "definitions")


def secrets_for(cases: Sequence[Case], holdout: Sequence[Case]) -> list[str]:
    """Every string a proposer must never see in any form: from each check of every case (``cases`` and
    ``holdout``) every string inside its ``value``, ``options`` and ``text``, however deeply nested, plus
    top-level numbers, JSON dumps of structured values, the quoted phrases and distinctive tokens of multi-word
    strings, ``" | "``-separated parts, and templated strings (``{{var}}``) both rendered with the case's vars
    and cut at their placeholders; each case's ``expected``; and the inputs and var values of ``holdout``
    (holdout and regression) cases, whose checks count too. The names a structured value is made of (mapping
    keys, a schema's property names) are words, not secrets: :func:`words_for`."""
    found: list[str] = []
    for case in [*cases, *holdout]:
        if case.expected:
            found.extend(_derived(case.expected, case))
        for spec in case.checks:
            found.extend(check_secrets(spec, case))
    for case in holdout:
        if case.input:
            found.append(case.input)
        found.extend(_strings(case.vars, keys=False))
    return ordered(found)


def words_for(cases: Sequence[Case], holdout: Sequence[Case]) -> list[str]:
    """The structural words of every check of ``cases`` and ``holdout``: the keys of a structured value and
    a JSON schema's property names (its ``required`` entries too), JSON Schema's own vocabulary left out. A
    proposer sees them only where they are whole words of no secret (the redactor hides them as whole words)."""
    found: list[str] = []
    for case in [*cases, *holdout]:
        for spec in case.checks:
            found.extend(check_words(spec))
    return ordered(found)


def ordered(found: Iterable[str]) -> list[str]:
    """Distinct non-blank strings, longest first."""
    return sorted({s for s in found if s.strip()}, key=lambda s: (-len(s), s))


def check_secrets(spec: CheckSpec, case: Case | None = None) -> list[str]:
    """The secrets of one check (see :func:`secrets_for`)."""
    value = spec.value
    if isinstance(value, str):
        texts = [value]
    elif _is_schema(spec):
        texts = schema_secrets(value)[0]
    else:
        texts = _strings(value, keys=False)
    texts = [t for t in texts if t not in _SCHEMA_WORDS or t is value] + _strings(spec.options, keys=False)
    if spec.text:
        texts.append(spec.text)
    out: list[str] = []
    if isinstance(value, int | float) and not isinstance(value, bool):
        out.append(str(value))
    if isinstance(value, dict | list) and any(isinstance(v, dict | list) for v in _children(value)):
        out += [json.dumps(value), json.dumps(value, separators=(",", ":")), json.dumps(value, indent=2)]
    elif isinstance(value, dict):
        out += [json.dumps(value), json.dumps(value, separators=(",", ":"))]
    for text in texts:
        out.extend(_derived(text, case))
    return out


def check_words(spec: CheckSpec) -> list[str]:
    """The structural words of one check (see :func:`words_for`)."""
    if _is_schema(spec):
        return schema_secrets(spec.value)[1]
    return _keys(spec.value)


def _is_schema(spec: CheckSpec) -> bool:
    return spec.type == "json_schema" and isinstance(spec.value, dict)


def schema_secrets(schema: Any) -> tuple[list[str], list[str]]:
    """A JSON schema's secrets and its structural words: the strings it holds (``enum``, ``const``,
    ``pattern``, ``description``, ...) and its property names (the keys of ``properties`` and the entries of
    ``required``, wherever they are nested); JSON Schema's own vocabulary is neither."""
    values: list[str] = []
    words: list[str] = []

    def walk(node: Any, parent: str | None) -> None:
        if isinstance(node, dict):
            for key, item in node.items():
                named = parent in _NAMING
                if named or (key not in _SCHEMA_KEYWORDS and not str(key).startswith("$")):
                    words.append(key)
                walk(item, "required" if parent == "dependentRequired" else None if named else key)
        elif isinstance(node, list):
            for item in node:
                walk(item, parent)
        elif isinstance(node, str):
            if parent in ("required", "dependentRequired"):
                words.append(node)
            elif node not in _SCHEMA_WORDS:
                values.append(node)

    walk(schema, None)
    return values, [w for w in words if isinstance(w, str) and w not in _SCHEMA_WORDS]


def _children(value: Any) -> list[Any]:
    return list(value.values()) if isinstance(value, dict) else list(value)


def _derived(text: str, case: Case | None) -> list[str]:
    """``text`` and what is derived from it: parts, quoted phrases, distinctive tokens, template renderings."""
    out = [text]
    if " | " in text:
        out.extend(part.strip() for part in text.split(" | "))
    if len(text.split()) > 1:
        out.extend(next(g for g in m.groups() if g) for m in _QUOTED.finditer(text))
        tokens = [t.strip("./:-") for t in _DISTINCT.findall(text)]
        out.extend(t for t in tokens + [t.rsplit("/", 1)[-1] for t in tokens] if len(t) >= 5)
    if "{{" in text:
        out.extend(piece.strip() for piece in _TEMPLATE.split(text)[::2] if len(piece.strip()) >= 5)
        if case is not None:
            out.append(_TEMPLATE.sub(lambda m: _lookup(case, m.group(1), m.group(0)), text))
    return out


def _lookup(case: Case, name: str, default: str) -> str:
    """A template variable's value in ``case`` (``input``, ``vars.x``, ``x``, ``x.y``); ``default`` if absent."""
    if name == "input":
        return case.prompt_text()
    current: Any = case.vars
    for key in name.removeprefix("vars.").split("."):
        if not isinstance(current, dict) or key not in current:
            return default
        current = current[key]
    return current if isinstance(current, str) else json.dumps(current, ensure_ascii=False)


def _keys(value: Any) -> list[str]:
    """The mapping keys inside a JSON-like value, schema words left out."""
    if isinstance(value, dict):
        found = [k for k in value if isinstance(k, str) and k not in _SCHEMA_WORDS]
        return found + [k for v in value.values() for k in _keys(v)]
    if isinstance(value, list | tuple):
        return [k for v in value for k in _keys(v)]
    return []


def _strings(value: Any, *, keys: bool) -> list[str]:
    """String leaves of a JSON-like value (and its mapping keys when ``keys``, schema words excepted); numbers
    inside structures are not secrets on their own."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        found = [k for k in value if keys and isinstance(k, str) and k not in _SCHEMA_WORDS]
        return found + [s for v in value.values() for s in _strings(v, keys=keys)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v, keys=keys)]
    return []
