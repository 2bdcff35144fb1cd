"""promptfoo test cases: a ``promptfooconfig.yaml`` (its ``tests`` and ``defaultTest``) or a tests file.

What is read:

- ``tests``: an inline list, a ``file://`` path (globs allowed) or a list mixing both; referenced files
  are YAML/JSON lists of tests, or CSV (header = var names; ``__expected``/``__expected1``... hold
  assertions such as ``contains: Paris`` or ``not-icontains: sorry``, a bare value meaning ``equals``;
  ``__description`` and ``__threshold`` are read too). ``file://`` paths are relative to the config.
- each test: ``vars``, ``assert``, ``description``, ``threshold`` (other keys, such as ``options``,
  ``metadata`` or ``provider``, are ignored);
- ``defaultTest`` (inline or ``file://``): its ``vars`` are merged under each test's vars, its ``assert``
  list comes before each test's own, its ``threshold`` is the default.

``prompts`` and ``providers`` are not read: the artifact and the runner provide the prompt.

Case fields: ``Case.vars`` holds the vars (``file://`` var values naming text files are replaced by the file
contents). ``Case.input`` is set only when the vars are exactly ``{input: <string>}``, so a template-free
runner gets that text; otherwise it stays None and runners render the vars. The id is the slugged
``description`` when that slug is unique within the config, else ``<file-stem>-<n>`` (1-based position
in the file that holds the test).

Assertion types map to assay checks (``not-`` prefix → ``negate``; ``weight`` and ``threshold`` carry over):
equals, contains, icontains, contains-any, contains-all, icontains-any, icontains-all, starts-with, regex,
is-json (with a ``value`` schema → json_schema), python, llm-rubric → llm_judge, factuality →
fact_coverage (the value is the one fact), similar, cost and latency (their ``threshold`` is the limit
and becomes the check's value).
``javascript`` is refused (use python), as are ``assert-set`` and ``transform``; other types are errors
listing the supported ones. ``metric`` and ``provider`` on an assertion are ignored; vars given as lists
are kept as lists (not expanded into several tests).
"""

from __future__ import annotations

import contextlib
import csv
import difflib
import glob
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.cases._common import (
    Loc,
    expect_list,
    expect_mapping,
    make_spec,
    number,
    read_data,
    read_text,
    slugify,
    type_name,
)
from assay.errors import ConfigError
from assay.model import Case, CheckSpec

ASSERT_TYPES: dict[str, str] = {
    "equals": "equals",
    "contains": "contains",
    "icontains": "icontains",
    "contains-any": "contains_any",
    "contains-all": "contains_all",
    "icontains-any": "icontains_any",
    "icontains-all": "icontains_all",
    "starts-with": "starts_with",
    "regex": "regex",
    "is-json": "json_valid",
    "python": "python",
    "llm-rubric": "llm_judge",
    "factuality": "fact_coverage",
    "similar": "similar",
    "cost": "cost",
    "latency": "latency",
}
_LIMIT_TYPES = ("cost", "latency")
_CODE_SUFFIXES = (".py", ".js", ".ts", ".mjs", ".cjs")
_CSV_TYPES = sorted({*ASSERT_TYPES, "grade", "fn", "eval", "javascript"} | {f"not-{t}" for t in ASSERT_TYPES})
_TYPE_LIKE = re.compile(r"[A-Za-z][\w-]*")
MAX_VAR_FILE_BYTES = 10 * 2**20


def map_assertion(data: Any, loc: Loc) -> CheckSpec:
    """Translate one promptfoo assertion into a validated CheckSpec."""
    data = expect_mapping(data, loc, "an assertion (a mapping with type and value)")
    kind = data.get("type")
    if not isinstance(kind, str) or not kind:
        raise loc.at("type").error("required field is missing" if kind is None else "expected a string")
    negate = kind.startswith("not-")
    base = kind.removeprefix("not-")
    if base == "javascript":
        raise loc.at("type").error("javascript assertions are not supported; use python")
    if base == "assert-set":
        raise loc.at("type").error("assert-set is not supported; list the assertions individually")
    if base not in ASSERT_TYPES:
        known = ", ".join(ASSERT_TYPES)
        raise loc.at("type").error(
            f"unsupported promptfoo assertion type {kind!r}; known: {known} (each also as not-<type>)"
        )
    if data.get("transform") is not None:
        raise loc.at("transform").error("transform is not supported; check the raw output (e.g. with python)")
    ours = ASSERT_TYPES[base]
    value = data.get("value")
    threshold = data.get("threshold")
    if base == "is-json" and value is not None:
        ours = "json_schema"
    if base == "factuality" and value is not None:
        value = [value]
    if base in _LIMIT_TYPES:
        if threshold is None:
            raise loc.at("threshold").error(f"a {base} assertion needs a threshold (the limit)")
        value, threshold = number(threshold, loc.at("threshold")), None
    fields: dict[str, Any] = {"type": ours, "value": value, "negate": negate, "threshold": threshold}
    if data.get("weight") is not None:
        fields["weight"] = data["weight"]
    return make_spec(fields, loc)


def _file_ref(value: Any) -> str | None:
    return value[len("file://") :] if isinstance(value, str) and value.startswith("file://") else None


def _resolve(ref: str, base: Path, loc: Loc) -> list[Path]:
    if any(ch in ref for ch in "*?["):
        matches = sorted(p for p in map(Path, glob.glob(str(base / ref))) if p.is_file())
        if not matches:
            raise loc.error(f"no file matches 'file://{ref}'")
        return matches
    return [base / ref]


@contextlib.contextmanager
def _named_at(loc: Loc) -> Iterator[None]:
    """A problem with a whole file that ``loc`` names with ``file://`` (missing, a FIFO, too large, bad
    syntax) is reported at ``loc``, followed by that file."""
    try:
        yield
    except ConfigError as exc:
        if exc.field is not None or exc.file is None or exc.file == str(loc.file):
            raise
        raise loc.error(f"{exc.file}: {exc.message}") from None


def _load_vars(data: Any, loc: Loc, base: Path) -> dict[str, Any]:
    if data is None:
        return {}
    if (ref := _file_ref(data)) is not None:
        with _named_at(loc):
            data = read_data(base / ref)
        loc = Loc(base / ref)
    out = dict(expect_mapping(data, loc, "a mapping of vars"))
    for key, value in out.items():
        ref = _file_ref(value)
        if ref is not None and not ref.endswith(_CODE_SUFFIXES):
            with _named_at(loc.at(key)):
                out[key] = read_text(base / ref, MAX_VAR_FILE_BYTES, "file:// vars")
    return out


class _Test:
    """One promptfoo test before it becomes a Case: where it came from and its raw fields."""

    def __init__(self, data: Any, loc: Loc, position: int) -> None:
        self.data = expect_mapping(data, loc, "a test (a mapping with vars and assert)")
        self.loc = loc
        self.position = position

    def description(self) -> str | None:
        value = self.data.get("description")
        if value is not None and not isinstance(value, str):
            raise self.loc.at("description").error(f"expected a string, got {type_name(value)}")
        return value


def _tests_from_file(path: Path) -> list[_Test]:
    if path.suffix.lower() == ".csv":
        return _tests_from_csv(path)
    data = read_data(path)
    items = expect_list(data, Loc(path), "a list of tests")
    return [_Test(item, Loc(path, (i,)), i + 1) for i, item in enumerate(items)]


def _csv_assertion(text: str, loc: Loc) -> dict[str, Any]:
    """promptfoo's rule for an ``__expected`` cell: ``type: value`` for a known type, else ``equals``. A
    prefix that is a near miss of a known type (``containz:``) is refused rather than compared verbatim."""
    head, sep, rest = text.partition(":")
    head = head.strip()
    if sep and head not in _CSV_TYPES and _TYPE_LIKE.fullmatch(head):
        near = difflib.get_close_matches(head.lower(), _CSV_TYPES, n=1, cutoff=0.8)
        if near:
            raise loc.error(
                f"unknown assertion type {head!r}; did you mean {near[0]!r}? (to compare the whole text, "
                "put 'equals:' before it)"
            )
    if head in ("grade", "llm-rubric"):
        return {"type": "llm-rubric", "value": rest.strip()}
    if head in ("fn", "eval", "javascript"):
        return {"type": "javascript", "value": rest.strip()}
    if sep and head.removeprefix("not-") in ASSERT_TYPES:
        value: Any = rest.strip()
        if head.removeprefix("not-").endswith(("contains-any", "contains-all")):
            value = [v.strip() for v in value.split(",") if v.strip()]
        return {"type": head, "value": value}
    if text.strip().removeprefix("not-") == "is-json":
        return {"type": text.strip()}
    return {"type": "equals", "value": text}


def _csv_number(cell: str, loc: Loc) -> float:
    try:
        return float(cell)
    except ValueError:
        raise loc.error(f"expected a number, got {cell!r}") from None


def _tests_from_csv(path: Path) -> list[_Test]:
    rows = list(csv.DictReader(io.StringIO(read_text(path), newline="")))
    tests = []
    for i, row in enumerate(rows):
        test: dict[str, Any] = {"vars": {}, "assert": []}
        for column, cell in row.items():
            if column is None or cell is None:
                raise Loc(path, prefix=f"row {i + 2}").error("more cells than header columns")
            if column.startswith("__expected"):
                if cell.strip():
                    where = Loc(path, prefix=f"row {i + 2}").at(column)
                    test["assert"].append(_csv_assertion(cell, where))
            elif column == "__description":
                test["description"] = cell or None
            elif column == "__threshold" and cell.strip():
                test["threshold"] = _csv_number(cell, Loc(path, prefix=f"row {i + 2}").at("__threshold"))
            elif not column.startswith("__"):
                test["vars"][column] = cell
        tests.append(_Test(test, Loc(path, prefix=f"row {i + 2}"), i + 1))
    return tests


def _collect_tests(value: Any, loc: Loc, base: Path) -> list[_Test]:
    if (ref := _file_ref(value)) is not None:
        with _named_at(loc):
            return [t for p in _resolve(ref, base, loc) for t in _tests_from_file(p)]
    items = expect_list(value, loc, "a list of tests or a file:// path")
    tests: list[_Test] = []
    for i, item in enumerate(items):
        if (ref := _file_ref(item)) is not None:
            with _named_at(loc.at(i)):
                tests.extend(t for p in _resolve(ref, base, loc.at(i)) for t in _tests_from_file(p))
        else:
            tests.append(_Test(item, loc.at(i), i + 1))
    return tests


def _build_case(test: _Test, case_id: str, default: _Test, base: Path) -> Case:
    data, loc = test.data, test.loc
    variables = _load_vars(default.data.get("vars"), default.loc.at("vars"), base)
    variables.update(_load_vars(data.get("vars"), loc.at("vars"), base))
    defaults = expect_list(default.data.get("assert") or [], default.loc.at("assert"), "a list of assertions")
    checks = [map_assertion(a, default.loc.at("assert", i)) for i, a in enumerate(defaults)]
    asserts = expect_list(data.get("assert") or [], loc.at("assert"), "a list of assertions")
    checks += [map_assertion(a, loc.at("assert", i)) for i, a in enumerate(asserts)]
    threshold = data.get("threshold", default.data.get("threshold"))
    if threshold is not None:
        threshold = number(threshold, loc.at("threshold"))
        if not 0 <= threshold <= 1:
            raise loc.at("threshold").error("expected a number between 0 and 1")
    only_input = set(variables) == {"input"} and isinstance(variables["input"], str)
    return Case(
        id=case_id,
        input=variables["input"] if only_input else None,
        vars=variables,
        checks=checks,
        threshold=threshold,
        source=str(loc.file),
    )


def _ids(tests: list[_Test]) -> list[str]:
    slugs = [slugify(d) if (d := t.description()) else "" for t in tests]
    return [
        slug if slug and slugs.count(slug) == 1 else f"{Path(t.loc.file or 'test').stem}-{t.position}"
        for slug, t in zip(slugs, tests, strict=True)
    ]


def parse_tests(tests: list[_Test], default: _Test, base: Path) -> list[tuple[Case, Loc]]:
    """Turn collected tests into cases, with ``default`` (promptfoo's defaultTest) merged into each."""
    return [
        (_build_case(test, cid, default, base), test.loc)
        for test, cid in zip(tests, _ids(tests), strict=True)
    ]


_NO_DEFAULT = _Test({}, Loc(Path("defaultTest")), 0)


def parse_config(data: dict[str, Any], file: Path) -> list[tuple[Case, Loc]]:
    """Parse a promptfoo config mapping (``tests`` plus optional ``defaultTest``)."""
    loc, base = Loc(file), file.parent
    if (ref := _file_ref(data.get("defaultTest"))) is not None:
        with _named_at(loc.at("defaultTest")):
            default = _Test(read_data(base / ref), Loc(base / ref), 0)
    else:
        default = _Test(data.get("defaultTest") or {}, loc.at("defaultTest"), 0)
    if "tests" not in data:
        raise loc.at("tests").error("required field is missing")
    return parse_tests(_collect_tests(data["tests"], loc.at("tests"), base), default, base)


def parse_tests_file(data: list[Any], file: Path) -> list[tuple[Case, Loc]]:
    """Parse a standalone promptfoo tests file: a list of ``{vars, assert, description}``."""
    tests = [_Test(item, Loc(file, (i,)), i + 1) for i, item in enumerate(data)]
    return parse_tests(tests, _NO_DEFAULT, file.parent)


def parse_csv_file(file: Path) -> list[tuple[Case, Loc]]:
    """Parse a promptfoo CSV tests file."""
    return parse_tests(_tests_from_csv(file), _NO_DEFAULT, file.parent)
