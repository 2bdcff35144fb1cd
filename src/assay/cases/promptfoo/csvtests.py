"""promptfoo's CSV tests: a header of var names, one test per row.

Special columns: ``__expected``, ``__expected1``, ... hold one assertion each, written ``type: value`` or
``type(threshold): value`` for any promptfoo type (``not-`` allowed; ``contains-any: a, b`` splits on
commas), ``grade:``/``llm-rubric:`` for a rubric, ``javascript:``/``fn:``/``eval:`` and ``python:`` for code,
``file://x.js``/``file://x.py`` for a script; any other text means ``equals``. ``__description``,
``__threshold`` and ``__config:__expected<N>:threshold`` are read; ``__metric``, ``__metadata:*``,
``__prefix``, ``__suffix`` and ``__providerOutput`` are reported as not used. Errors name the row
(``row 3``, counting the header as row 1). A prefix that is a near miss of a type (``containz: x``) is an
error suggesting the type; write ``equals:containz: x`` to compare that text.
"""

from __future__ import annotations

import csv
import difflib
import io
import re
from pathlib import Path
from typing import Any

from assay.cases._common import Loc, Notes, read_text

_TYPE_LIKE = re.compile(r"[A-Za-z][\w-]*")
_LEGACY_CODE = (
    ("javascript:", "javascript"),
    ("fn:", "javascript"),
    ("eval:", "javascript"),
    ("python:", "python"),
)
_THRESHOLD_TYPES = frozenset(
    (
        "answer-relevance",
        "classifier",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "cost",
        "latency",
        "levenshtein",
        "perplexity-score",
        "perplexity",
        "rouge-n",
        "similar",
        "starts-with",
    )
)
_LIST_TYPES = frozenset(("contains-all", "contains-any", "icontains-all", "icontains-any"))


def assertion_types() -> list[str]:
    from assay.cases.promptfoo.assertions import HANDLERS, UNSUPPORTED

    return sorted({*HANDLERS, *UNSUPPORTED, "max-score", "assert-set"})


def assertion_from_text(text: str, loc: Loc) -> dict[str, Any]:
    """One ``__expected`` cell as a promptfoo assertion mapping."""
    text = text.strip()
    for prefix, kind in _LEGACY_CODE:
        if text.startswith(prefix):
            return {"type": kind, "value": text[len(prefix) :].strip()}
    if text.startswith("file://"):
        path = text.split(":", 2)[1] if text.count(":") > 1 else text
        if path.endswith(".py") or ".py:" in text:
            return {"type": "python", "value": text}
        if re.search(r"\.(c|m)?js(:\w+)?$", text):
            return {"type": "javascript", "value": text}
    for prefix in ("grade:", "llm-rubric:"):
        if text.startswith(prefix):
            return {"type": "llm-rubric", "value": text[len(prefix) :].strip()}
    types = assertion_types()
    match = re.match(r"^(not-)?([a-z][\w:-]*?)(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$", text)
    if match and match.group(2) in types:
        negate, kind, threshold, value = match.groups()
        out: dict[str, Any] = {"type": f"{negate or ''}{kind}"}
        if kind in _LIST_TYPES:
            out["value"] = [v.strip() for v in value.split(",")] if value else value
        elif value is not None:
            out["value"] = value if kind in ("is-json", "contains-json") else value.strip()
        if threshold is not None:
            out["threshold"] = float(threshold)
        elif kind in _THRESHOLD_TYPES:
            out["threshold"] = 0.8 if kind == "similar" else 0.75
        return out
    head, sep, _ = text.partition(":")
    head = head.strip()
    if sep and _TYPE_LIKE.fullmatch(head):
        negated = head.lower().startswith("not-")
        near = difflib.get_close_matches(head.lower().removeprefix("not-"), types, n=1, cutoff=0.8)
        if near:
            suggestion = f"not-{near[0]}" if negated else near[0]
            raise loc.error(
                f"unknown assertion type {head!r}; did you mean {suggestion!r}? (to compare the whole text, "
                "put 'equals:' before it)"
            )
    return {"type": "equals", "value": text}


def _number(cell: str, loc: Loc) -> float:
    try:
        return float(cell)
    except ValueError:
        raise loc.error(f"expected a number, got {cell!r}") from None


def rows_as_tests(path: Path, notes: Notes) -> list[tuple[dict[str, Any], Loc]]:
    """The tests of a CSV file, each with its row's location."""
    text = read_text(path)
    rows = list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"), newline="")))
    tests = []
    for i, row in enumerate(rows):
        loc = Loc(path, prefix=f"row {i + 2}")
        test: dict[str, Any] = {"vars": {}, "assert": []}
        thresholds: dict[int, float] = {}
        for column, cell in row.items():
            if column is None or cell is None:
                raise loc.error("more cells than header columns")
            column = column.strip()
            if column.startswith("__expected"):
                if cell.strip():
                    test["assert"].append(assertion_from_text(cell, loc.at(column)))
            elif column == "__description":
                test["description"] = cell or None
            elif column == "__threshold":
                if cell.strip():
                    test["threshold"] = _number(cell, loc.at("__threshold"))
            elif column.startswith("__config:"):
                found = re.fullmatch(r"__config:__expected(\d*):threshold", column)
                if found is None:
                    raise loc.at(column).error("expected __config:__expected<N>:threshold")
                if cell.strip():
                    thresholds[int(found.group(1) or 1) - 1] = _number(cell, loc.at(column))
            elif column.startswith("__"):
                if cell.strip():
                    notes.warn(Loc(path).at(column), "not used by assay")
            else:
                test["vars"][column] = cell
        for index, value in thresholds.items():
            if index < len(test["assert"]):
                test["assert"][index]["threshold"] = value
        tests.append((test, loc))
    return tests
