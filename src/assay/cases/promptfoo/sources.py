"""Where promptfoo tests come from: inline, or files named by ``tests`` (globs allowed).

``.yaml``/``.yml``/``.json`` (a list of tests, or one), ``.jsonl`` (one test per line) and ``.csv`` files;
``file://tests.py[:function]`` (``generate_tests(config)``, run while loading: the suite's own code) and
``file://tests.js[:function]`` (an exported list, or a function returning one, run in Node). A
``{path, config}`` entry passes ``config`` to the generator. TypeScript files, Excel sheets, Hugging Face
datasets and Google Sheets are refused with the reason.
"""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.cases._common import Loc, Notes, expect_list, type_name
from assay.cases.native import read_jsonl
from assay.cases.promptfoo.csvtests import rows_as_tests
from assay.cases.promptfoo.files import (
    JS_SUFFIXES,
    TS_SUFFIXES,
    FileScope,
    named_at,
    read_structured,
    resolve,
)
from assay.checks.node import JsCall, NodeError, call_js_sync, split_file_ref

SCRIPT_SUFFIXES = (".py", *JS_SUFFIXES, *TS_SUFFIXES)
REMOTE = {
    "huggingface://": "Hugging Face datasets are downloaded by promptfoo; save the rows as a CSV or JSONL "
    "file and point `tests` at it",
    "https://docs.google.com/spreadsheets/": "Google Sheets are fetched by promptfoo; export the sheet as CSV",
}


@dataclass
class Test:
    """One promptfoo test before it becomes cases: its fields, where it was written, its 1-based position in
    that file (for ids), and the folder its own ``vars: file://`` paths resolve against."""

    data: dict[str, Any]
    loc: Loc
    position: int
    folder: Path

    def description(self) -> str | None:
        value = self.data.get("description")
        if value is not None and not isinstance(value, str):
            raise self.loc.at("description").error(f"expected a string, got {type_name(value)}")
        return value


def _as_tests(items: Any, file: Path, loc: Loc) -> list[Test]:
    if isinstance(items, dict):
        items = [items]
    items = expect_list(items, loc, "a list of tests")
    out = []
    for i, item in enumerate(items):
        at = loc.at(i) if loc.parts or loc.prefix else Loc(file, (i,))
        if not isinstance(item, dict):
            raise at.error(f"expected a test (a mapping with vars and assert), got {type_name(item)}")
        out.append(Test(item, at, i + 1, file.parent))
    return out


def _generated(path: Path, function: str | None, config: Any, loc: Loc, files: FileScope) -> list[Test]:
    args = [] if config is None else [config]
    if path.suffix == ".py":
        from assay.checks.base import CheckSpecError
        from assay.checks.programs import import_file_function

        try:
            result = import_file_function(path, function or "generate_tests")(*args)
        except CheckSpecError as exc:
            raise loc.error(str(exc)) from None
        except Exception as exc:
            raise loc.error(
                f"{path}: {function or 'generate_tests'} raised {type(exc).__name__}: {exc}"
            ) from None
    else:
        call = JsCall(args=args, file=str(path), function=function, exported_value=True)
        try:
            result = call_js_sync(call, cwd=files.base)
        except NodeError as exc:
            raise loc.error(f"{path}: {exc}") from None
    if not isinstance(result, list):
        raise loc.error(f"{path} must give a list of tests, got {type_name(result)}")
    return _as_tests(result, path, Loc(path, prefix="generated"))


def _from_file(
    path: Path, function: str | None, config: Any, loc: Loc, files: FileScope, notes: Notes
) -> list[Test]:
    suffix = path.suffix.lower()
    if suffix in TS_SUFFIXES:
        raise loc.error(
            f"{path.name}: TypeScript test files are not supported (no TypeScript runner); use .js, .py, YAML, JSON or CSV"
        )
    if suffix in (".xlsx", ".xls"):
        raise loc.error(f"{path.name}: Excel sheets are not read by assay; save the sheet as CSV")
    if suffix == ".py" or suffix in JS_SUFFIXES:
        return _generated(path, function, config, loc, files)
    with named_at(loc):
        if suffix == ".csv":
            return [
                Test(data, at, i + 1, path.parent) for i, (data, at) in enumerate(rows_as_tests(path, notes))
            ]
        if suffix == ".jsonl":
            tests = []
            for i, (row, at) in enumerate(read_jsonl(path)):
                if not isinstance(row, dict):
                    raise at.error(f"expected a test (a mapping with vars and assert), got {type_name(row)}")
                tests.append(Test(row, at, i + 1, path.parent))
            return tests
        if suffix in (".yaml", ".yml", ".json"):
            return _as_tests(read_structured(path), path, Loc(path))
    raise loc.error(f"unsupported test file type {path.name!r}: expected YAML, JSON, JSONL, CSV, .py or .js")


def tests_from_ref(ref: str, loc: Loc, files: FileScope, notes: Notes, config: Any = None) -> list[Test]:
    """The tests a ``tests`` string names (``file://`` optional), globs expanded in sorted order."""
    for prefix, why in REMOTE.items():
        if ref.startswith(prefix):
            raise loc.error(f"{ref}: {why}")
    if ref.startswith(("http://", "https://")):
        raise loc.error(f"{ref}: remote test files are not fetched; download it and name the local file")
    path_text, function = split_file_ref(ref)
    if not path_text.lower().endswith(SCRIPT_SUFFIXES):
        path_text, function = ref.removeprefix("file://"), None
    if any(ch in path_text for ch in "*?["):
        matches = sorted(p for p in map(Path, glob.glob(str(resolve(path_text, files.base)))) if p.is_file())
        if not matches:
            raise loc.error(f"no file matches 'file://{path_text}'")
        return [t for p in matches for t in _from_file(p, None, config, loc, files, notes)]
    return _from_file(resolve(path_text, files.base), function, config, loc, files, notes)


def collect_tests(value: Any, loc: Loc, files: FileScope, notes: Notes) -> list[Test]:
    """Every test a config's ``tests`` field gives: a path, a ``{path, config}``, or a list of tests, paths
    and ``{path, config}`` entries."""
    if isinstance(value, str):
        return tests_from_ref(value, loc, files, notes)
    if isinstance(value, dict) and isinstance(value.get("path"), str):
        return tests_from_ref(value["path"], loc, files, notes, value.get("config"))
    items = expect_list(value, loc, "a list of tests or a file:// path")
    tests: list[Test] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            tests.extend(tests_from_ref(item, loc.at(i), files, notes))
        elif (
            isinstance(item, dict)
            and isinstance(item.get("path"), str)
            and not item.keys() & {"vars", "assert"}
        ):
            tests.extend(tests_from_ref(item["path"], loc.at(i), files, notes, item.get("config")))
        else:
            if not isinstance(item, dict):
                raise loc.at(i).error(
                    f"expected a test (a mapping with vars and assert), got {type_name(item)}"
                )
            tests.append(Test(item, loc.at(i), i + 1, files.base))
    return tests
