"""Anthropic skill-creator ``evals.json``, with the prefix syntax for programmatic expectations.

The file::

    {"skill_name": "pdf", "evals": [{"id": 1, "prompt": "...", "expected_output": "...",
      "files": ["evals/files/a.pdf"], "expectations": ["[contains] Total:", "The summary names the author"]}]}

maps ``prompt`` → ``Case.input``, ``expected_output`` → ``Case.expected``, ``files`` → ``Case.files`` and
``str(id)`` → ``Case.id``. Each expectation string becomes one check and keeps its wording in
``CheckSpec.text``:

- ``[contains] x``, ``[not_contains] x``, ``[icontains] x``, ``[equals] x``, ``[starts_with] x``,
  ``[regex] p``, ``[not_regex] p``, ``[file_exists] path``, ``[json_valid]``, ``[script_check] cmd``
  (type ``script``), ``[fact_coverage] a | b | c`` (a list of facts), ``[llm_judge] rubric``;
- a plain sentence → ``llm_judge`` with the sentence as the rubric.

The value is the text after the prefix, stripped; one pair of surrounding quotes is removed so that
``[contains] " total"`` can keep a leading space. An unknown ``[prefix]`` is an error listing the known ones.
An expectation may also be a native check mapping (``{"type": "regex", "value": "..."}``). Other fields
of an eval are ignored.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from assay.cases._common import (
    Loc,
    case_id,
    expect_list,
    expect_mapping,
    make_spec,
    native_check,
    split_negation,
    str_list,
    type_name,
)
from assay.model import Case, CheckSpec

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


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def parse_expectation(text: str, loc: Loc) -> CheckSpec:
    """Turn one expectation string into a validated CheckSpec (``text`` keeps the original string)."""
    match = _PREFIX.match(text)
    if match is None:
        if not text.strip():
            raise loc.error("empty expectation")
        return make_spec({"type": "llm_judge", "value": text.strip(), "text": text}, loc)
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
    return make_spec({"type": kind, "value": value, "negate": negate, "text": text}, loc)


def parse_eval(data: Any, loc: Loc) -> Case:
    """Parse one entry of ``evals``."""
    data = expect_mapping(data, loc, "an eval (a mapping with id, prompt, expectations)")
    if "id" not in data:
        raise loc.at("id").error("required field is missing")
    prompt = data.get("prompt")
    if not isinstance(prompt, str):
        what = (
            "required field is missing" if prompt is None else f"expected a string, got {type_name(prompt)}"
        )
        raise loc.at("prompt").error(what)
    expected = data.get("expected_output")
    if expected is not None and not isinstance(expected, str):
        raise loc.at("expected_output").error(f"expected a string, got {type_name(expected)}")
    checks: list[CheckSpec] = []
    items = expect_list(data.get("expectations") or [], loc.at("expectations"), "a list of expectations")
    for i, item in enumerate(items):
        where = loc.at("expectations", i)
        if isinstance(item, str):
            checks.append(parse_expectation(item, where))
        elif isinstance(item, dict):
            checks.append(native_check(item, where))
        else:
            raise where.error(f"expected a string (or a check mapping), got {type_name(item)}")
    return Case(
        id=case_id(data["id"], loc.at("id")),
        input=prompt,
        expected=expected,
        files=str_list(data.get("files"), loc.at("files")),
        checks=checks,
        source=str(loc.file),
    )


def parse_evals_file(data: Any, file: Path) -> list[tuple[Case, Loc]]:
    """Parse a whole ``evals.json`` document (a mapping with ``evals``)."""
    loc = Loc(file)
    data = expect_mapping(data, loc)
    skill = data.get("skill_name")
    if skill is not None and not isinstance(skill, str):
        raise loc.at("skill_name").error(f"expected a string, got {type_name(skill)}")
    items = expect_list(data.get("evals"), loc.at("evals"), "a list of evals")
    return [(parse_eval(item, loc.at("evals", i)), loc.at("evals", i)) for i, item in enumerate(items)]
