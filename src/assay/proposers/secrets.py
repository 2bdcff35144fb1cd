"""What a proposer must never see, collected generically from the cases, so that any check type — today's and
those a case format adds later (javascript and python assertions, rubric prompts, templated values) — is
covered without a special case."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
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


def secrets_for(cases: Sequence[Case], holdout: Sequence[Case]) -> list[str]:
    """Every string a proposer must never see: from each check of every case (``cases`` and ``holdout``) every
    string inside its ``value``, ``options`` and ``text``, however deeply nested (dict keys of values too,
    except JSON Schema's own words), plus top-level numbers, JSON dumps of structured values, the quoted
    phrases and distinctive tokens of multi-word strings, ``" | "``-separated parts, and templated strings
    (``{{var}}``) both rendered with the case's vars and cut at their placeholders; each case's ``expected``;
    and the inputs and var values of ``holdout`` (holdout and regression) cases, whose checks count too."""
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
    return sorted({s for s in found if s.strip()}, key=lambda s: (-len(s), s))


def check_secrets(spec: CheckSpec, case: Case | None = None) -> list[str]:
    """The secrets of one check (see :func:`secrets_for`)."""
    value = spec.value
    texts = [value] if isinstance(value, str) else _strings(value, keys=True)
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
