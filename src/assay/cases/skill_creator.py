"""Anthropic skill-creator ``evals.json``, and the shapes skill authors give it in the wild.

The documented file::

    {"skill_name": "pdf", "evals": [{"id": 1, "prompt": "...", "expected_output": "...",
      "files": ["evals/files/a.pdf"], "expectations": ["[contains] Total:", "The summary names the author"]}]}

maps ``prompt`` → ``Case.input``, ``expected_output`` → ``Case.expected``, ``files`` → ``Case.files`` and
``str(id)`` → ``Case.id``; each expectation becomes one check (see :mod:`assay.cases.expectations`).

Also read, as found in public skill repositories: the evals under ``evals``, ``cases``, ``test_cases`` or
``tests`` (a file is read as promptfoo only when it looks like promptfoo), or a top-level list of evals; the
input under ``prompt``, ``input``, ``query`` or ``question``; the id from ``id``/``eval_id``, else
``name``/``eval_name``/``slug``, else the position (``evals-3``); checks from every field in
``CHECK_FIELDS`` (``assertions``, ``expected_behavior``, ``must_have``, ``must_not_contain``, ``rubric``,
``evaluation_criteria``, ...) and any other ``expected_<what>`` field, judged as a rubric. A field that is
read for nothing is named in a warning; an eval left without checks is unjudged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.cases._common import Loc, Notes, case_id, expect_list, slugify, str_list, type_name
from assay.cases.expectations import (
    PREFIXES,
    avoidance_check,
    entry_check,
    field_rubric,
    parse_expectation,
    presence_check,
)
from assay.errors import ConfigError
from assay.model import Case, CheckSpec

__all__ = ["EVAL_KEYS", "PREFIXES", "parse_document", "parse_eval", "parse_expectation"]

LIST_KEYS = ("evals", "cases", "test_cases", "tests")
INPUT_KEYS = ("prompt", "input", "query", "question", "user_prompt", "task")
TURNS_KEYS = ("prompt_sequence", "query_flow", "turns", "prompts")
ID_KEYS = ("id", "eval_id")
NAME_KEYS = ("name", "eval_name", "slug", "title")
FILES_KEYS = ("files", "input_files")
# field -> how its entries become checks
CHECK_FIELDS: dict[str, str] = {
    "expectations": "entry",
    "assertions": "entry",
    "expected": "entry",
    "expect": "entry",
    "expected_behavior": "entry",
    "expected_behaviors": "entry",
    "expected_behaviour": "entry",
    "expected_behaviours": "entry",
    "criteria": "entry",
    "success_criteria": "entry",
    "evaluation_criteria": "entry",
    "rubric": "entry",
    "deterministic_assertions": "entry",
    "checks": "entry",
    "must_have": "present",
    "must_contain": "present",
    "must_include": "present",
    "required_output_sections": "present",
    "must_not_have": "absent",
    "must_not_contain": "absent",
    "must_not_include": "absent",
    "fail": "avoid",
    "must_not": "avoid",
    "forbidden_behaviors": "avoid",
    "forbidden_behaviours": "avoid",
    "anti_patterns": "avoid",
}
# Fields skill-creator's own schema defines as lists: anything else is an error, not one entry.
LIST_ONLY = frozenset(("expectations", "assertions"))
# Read for the case itself, or metadata that says nothing about a good output: not reported.
QUIET_KEYS = frozenset(
    (
        *ID_KEYS,
        *NAME_KEYS,
        *INPUT_KEYS,
        *TURNS_KEYS,
        *FILES_KEYS,
        "expected_output",
        "description",
        "tags",
        "notes",
        "category",
        "difficulty",
        "priority",
        "group",
        "kind",
        "metadata",
        "comment",
        "comments",
        "rationale",
    )
)
EVAL_KEYS = frozenset(INPUT_KEYS) | frozenset(CHECK_FIELDS) | {"expected_output"}
_TOP_QUIET = frozenset(
    ("skill_name", "skill", "name", "description", "version", "notes", "updated", "_readme")
)


def _pick(data: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    return next((k for k in keys if data.get(k) is not None), None)


def _id(data: dict[str, Any], loc: Loc, fallback: str) -> str:
    key = _pick(data, ID_KEYS)
    if key is not None:
        return case_id(data[key], loc.at(key))
    key = _pick(data, NAME_KEYS)
    if key is not None and isinstance(data[key], str):
        try:
            return case_id(data[key], loc.at(key))
        except ConfigError:
            return slugify(data[key]) or fallback
    return fallback


def _input(data: dict[str, Any], loc: Loc, notes: Notes) -> str:
    key = _pick(data, INPUT_KEYS)
    turns_key = _pick(data, TURNS_KEYS)
    if key is None and turns_key is not None:
        turns = data[turns_key]
        if isinstance(turns, list) and turns and all(isinstance(t, str) for t in turns):
            notes.warn(
                loc.at(turns_key),
                "a multi-turn prompt is given as one input, its turns separated by blank lines",
            )
            return "\n\n".join(turns)
    if key is None:
        raise loc.at("prompt").error("required field is missing (the task given to the skill)")
    value = data[key]
    if not isinstance(value, str):
        raise loc.at(key).error(f"expected a string, got {type_name(value)}")
    for other in INPUT_KEYS:
        if other != key and data.get(other) is not None:
            notes.warn(loc.at(other), f"not read: the input is `{key}` (one input per eval)")
    return value


def _expected(data: dict[str, Any], loc: Loc) -> str | None:
    value = data.get("expected_output")
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise loc.at("expected_output").error("expected a string, got boolean")
    return json.dumps(value, ensure_ascii=False)


def _files(data: dict[str, Any], loc: Loc) -> list[str]:
    key = _pick(data, FILES_KEYS)
    if key is None:
        return []
    items = data[key]
    if isinstance(items, list):
        items = [item.get("path", item) if isinstance(item, dict) else item for item in items]
    return str_list(items, loc.at(key))


def _entries(value: Any) -> list[tuple[int | str | None, Any]]:
    """A field's entries with their index (or key): a list, a ``{name: description}`` mapping, or one."""
    if isinstance(value, list):
        return list(enumerate(value))
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return [(k, f"{str(k).replace('_', ' ')}: {v}") for k, v in value.items()]
    return [(None, value)]


def _field_checks(name: str, value: Any, loc: Loc, notes: Notes) -> list[CheckSpec]:
    how = CHECK_FIELDS[name]
    if name in LIST_ONLY and not isinstance(value, list):
        # skill-creator's schema: a list. A string read as one check would hide a typo'd file from its author.
        raise loc.at(name).error(f'expected a list of {name}, got {type_name(value)}; write ["..."]')
    make: Callable[[Any, Loc], CheckSpec]
    if how == "present":
        make = lambda entry, at: presence_check(entry, at, present=True)  # noqa: E731
    elif how == "absent":
        make = lambda entry, at: presence_check(entry, at, present=False)  # noqa: E731
    elif how == "avoid":
        make = avoidance_check
    else:
        make = lambda entry, at: entry_check(entry, at, notes)  # noqa: E731
    checks = []
    for index, entry in _entries(value):
        at = loc.at(name) if index is None else loc.at(name, index)
        if isinstance(entry, dict) and entry.get("retired"):
            notes.warn(at, "a retired assertion is skipped")
            continue
        if name == "deterministic_assertions" and isinstance(entry, dict) and "cmd" in entry:
            notes.warn(
                at.at("cmd"), "the command of a deterministic assertion is not run: its text is judged"
            )
        checks.append(make(entry, at))
    return checks


def parse_eval(data: Any, loc: Loc, position: int, notes: Notes) -> Case:
    """Parse one eval (an entry of ``evals`` or of a list of evals)."""
    if not isinstance(data, dict):
        raise loc.error(f"expected an eval (a mapping with id, prompt, expectations), got {type_name(data)}")
    fallback = f"{(loc.parts[0] if loc.parts and isinstance(loc.parts[0], str) else 'eval')}-{position}"
    checks: list[CheckSpec] = []
    for key, value in data.items():
        if key in CHECK_FIELDS:
            if value not in (None, "", [], {}):
                checks.extend(_field_checks(key, value, loc, notes))
        elif key.startswith("expected_") and key != "expected_output":
            if value not in (None, "", [], {}):
                notes.warn(loc.at(key), f"{key} is judged as a rubric (llm_judge)")
                checks.append(field_rubric(key.removeprefix("expected_"), value, loc.at(key)))
        elif key not in QUIET_KEYS:
            notes.warn(loc.at(key), "not read by assay")
    name_key = _pick(data, NAME_KEYS)
    description = data.get("description") if isinstance(data.get("description"), str) else None
    if description is None and name_key is not None and isinstance(data[name_key], str):
        description = data[name_key]
    tags = data.get("tags")
    return Case(
        id=_id(data, loc, fallback),
        input=_input(data, loc, notes),
        expected=_expected(data, loc),
        files=_files(data, loc),
        checks=checks,
        tags=str_list(tags, loc.at("tags")) if isinstance(tags, list | str) else [],
        description=description,
        source=str(loc.file),
    )


def parse_document(data: Any, file: Path, notes: Notes) -> list[tuple[Case, Loc]]:
    """Parse a whole evals document: a mapping with ``evals`` (or ``cases``, ``test_cases``, ``tests``), or
    a list of evals."""
    loc = Loc(file)
    if isinstance(data, dict):
        skill = data.get("skill_name")
        if skill is not None and not isinstance(skill, str):
            raise loc.at("skill_name").error(f"expected a string, got {type_name(skill)}")
        key = next((k for k in LIST_KEYS if k in data), "evals")
        unread = [k for k in data if k != key and k not in _TOP_QUIET]
        if unread:
            notes.warn(loc, f"top-level fields not read by assay: {', '.join(map(str, unread))}")
        loc = loc.at(key)
        data = data.get(key)
    items = expect_list(data, loc, "a list of evals")
    return [(parse_eval(item, loc.at(i), i + 1, notes), loc.at(i)) for i, item in enumerate(items)]
