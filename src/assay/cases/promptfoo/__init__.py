"""promptfoo test suites: a ``promptfooconfig.yaml`` (its ``tests``, ``defaultTest`` and ``scenarios``) or a
tests file (YAML/JSON list, JSONL, CSV, or a Python/JavaScript generator).

A file is read as promptfoo when it looks like promptfoo: a mapping with ``tests`` and one of promptfoo's
top-level keys (``prompts``, ``providers``, ``defaultTest``, ...) or whose tests use only promptfoo's test
fields; a list of tests with ``vars``/``assert`` and no ``id``. ``prompts`` and ``providers`` are not read
here (the artifact and the runner give the output; ``assay init`` maps them, see
:mod:`assay.starters.promptfoo`), except the first prompt's text (given to var scripts) and the first
provider's tools (for ``is-valid-openai-tools-call``).

How tests become cases: :mod:`.config`; where they come from: :mod:`.sources`; assertions:
:mod:`.assertions`; ``file://``: :mod:`.files`; CSV: :mod:`.csvtests`. Everything that is read differently
from promptfoo, or not at all, is reported as a warning (see docs/cases.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.cases._common import Loc, Notes, expect_mapping, type_name
from assay.cases.promptfoo.assertions import HANDLERS, UNSUPPORTED, Scope, map_assertion
from assay.cases.promptfoo.config import TEST_KEYS, UNUSED_TEST_KEYS, cases_of
from assay.cases.promptfoo.files import FileScope, file_ref, named_at, read_structured, resolve
from assay.cases.promptfoo.sources import SCRIPT_SUFFIXES, Test, collect_tests, tests_from_ref
from assay.model import Case

__all__ = [
    "HANDLERS",
    "SCRIPT_SUFFIXES",
    "UNSUPPORTED",
    "Scope",
    "looks_like_config",
    "looks_like_tests",
    "map_assertion",
    "parse_config",
    "parse_csv_file",
    "parse_jsonl_tests",
    "parse_tests_file",
    "parse_tests_ref",
]

# Keys only a promptfoo config has (``env``, ``metadata`` or ``description`` say nothing on their own).
CONFIG_KEYS = frozenset(
    (
        "prompts",
        "providers",
        "targets",
        "defaultTest",
        "scenarios",
        "evaluateOptions",
        "outputPath",
        "sharing",
        "nunjucksFilters",
        "extensions",
        "redteam",
        "derivedMetrics",
        "commandLineOptions",
        "tracing",
        "writeLatestResults",
    )
)
_PROMPTFOO_TEST_KEYS = TEST_KEYS | frozenset(UNUSED_TEST_KEYS)


def looks_like_config(data: dict[str, Any]) -> bool:
    """A mapping with ``tests`` is a promptfoo config when it has another promptfoo key, names its tests by
    path, or its tests use only promptfoo's test fields."""
    if data.keys() & CONFIG_KEYS or isinstance(data.get("tests"), str):
        return True
    tests = data.get("tests")
    if not isinstance(tests, list):
        return isinstance(tests, dict) and (
            "path" in tests or (bool(tests) and tests.keys() <= _PROMPTFOO_TEST_KEYS)
        )
    entries = [t for t in tests if isinstance(t, dict)]
    return all(entry.keys() <= _PROMPTFOO_TEST_KEYS | {"path", "config"} for entry in entries)


def looks_like_tests(items: list[Any]) -> bool:
    """A list without ids whose entries carry promptfoo's ``vars`` / ``assert`` is a promptfoo tests file."""
    mappings = [item for item in items if isinstance(item, dict)]
    return (
        bool(mappings)
        and not any("id" in item for item in mappings)
        and any("assert" in item or "vars" in item for item in mappings)
    )


def _first_prompt(data: dict[str, Any], base: Path) -> str:
    prompts = data.get("prompts")
    first = prompts[0] if isinstance(prompts, list) and prompts else prompts
    if isinstance(first, dict):
        first = first.get("raw") or first.get("id")
    if not isinstance(first, str):
        return ""
    if (ref := file_ref(first)) is not None:
        path = resolve(ref, base)
        if path.suffix.lower() in (".txt", ".md", ".j2", ".njk", ".prompt") and path.is_file():
            try:
                return path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return ""
        return ""
    return first


def _provider_tools(data: dict[str, Any]) -> Any:
    """The first provider's ``tools`` or ``functions`` (a ``file://`` path is read when checked)."""
    providers = data.get("providers") or data.get("targets")
    first = providers[0] if isinstance(providers, list) and providers else providers
    if isinstance(first, dict):
        given = first.get("config")
        config: dict[str, Any] = given if isinstance(given, dict) else {}
        return config.get("tools") or config.get("functions")
    return None


_NO_DEFAULT = Test({}, Loc(Path("defaultTest")), 0, Path("."))


def _default_test(data: dict[str, Any], loc: Loc, base: Path) -> Test:
    value = data.get("defaultTest")
    if (ref := file_ref(value)) is not None:
        path = resolve(ref, base)
        with named_at(loc.at("defaultTest")):
            value = read_structured(path)
        return Test(
            expect_mapping(value, Loc(path), "a test (a mapping with vars and assert)"),
            Loc(path),
            0,
            path.parent,
        )
    if value is None:
        return Test({}, loc.at("defaultTest"), 0, base)
    data_ = expect_mapping(value, loc.at("defaultTest"), "a test (a mapping with vars and assert)")
    return Test(data_, loc.at("defaultTest"), 0, base)


def _scenario_tests(data: dict[str, Any], loc: Loc, files: FileScope, notes: Notes) -> list[Test]:
    out: list[Test] = []
    scenarios = data.get("scenarios") or []
    for s, scenario in enumerate(expect_list_of_maps(scenarios, loc.at("scenarios"))):
        at = loc.at("scenarios", s)
        configs = expect_list_of_maps(scenario.get("config") or [{}], at.at("config"))
        tests = (
            collect_tests(scenario["tests"], at.at("tests"), files, notes)
            if scenario.get("tests")
            else [Test({}, at, 1, files.base)]
        )
        for _c, config in enumerate(configs):
            for test in tests:
                merged = {**config, **test.data}
                merged["vars"] = {**(config.get("vars") or {}), **(test.data.get("vars") or {})}
                merged["assert"] = [*(config.get("assert") or []), *(test.data.get("assert") or [])]
                name = " ".join(
                    str(x)
                    for x in (
                        scenario.get("description"),
                        config.get("description"),
                        test.data.get("description"),
                    )
                    if x
                )
                if name:
                    merged["description"] = name
                out.append(Test(merged, test.loc, len(out) + 1, test.folder))
    return out


def expect_list_of_maps(value: Any, loc: Loc) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise loc.error(f"expected a list of mappings, got {type_name(value)}")
    return value


def resolve_refs(value: Any, document: Any, loc: Loc, depth: int = 0) -> Any:
    """``{$ref: '#/path/to/x'}`` replaced by what it points at in the same document (promptfoo dereferences
    JSON references in configs); references to other files are refused."""
    if depth > 50:
        raise loc.error("$ref nests too deep (a reference cycle?)")
    if isinstance(value, list):
        return [resolve_refs(v, document, loc, depth) for v in value]
    if not isinstance(value, dict):
        return value
    ref = value.get("$ref")
    if isinstance(ref, str):
        if not ref.startswith("#/"):
            raise loc.error(f"$ref {ref!r}: only references inside the same file (#/...) are read")
        target: Any = document
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                raise loc.error(f"$ref {ref!r} points at nothing")
        return resolve_refs(target, document, loc, depth + 1)
    return {k: resolve_refs(v, document, loc, depth) for k, v in value.items()}


def parse_config(data: dict[str, Any], file: Path, notes: Notes) -> list[tuple[Case, Loc]]:
    """Parse a promptfoo config mapping (``tests``, ``defaultTest``, ``scenarios``)."""
    loc, base = Loc(file), file.parent
    if "$ref" in str(data):
        data = {
            k: resolve_refs(v, data, loc.at(k)) if k in ("tests", "defaultTest", "scenarios") else v
            for k, v in data.items()
        }
    files = FileScope(base, prompt=_first_prompt(data, base), provider_tools=_provider_tools(data))
    env = data.get("env") if isinstance(data.get("env"), dict) else {}
    default = _default_test(data, loc, base)
    if "tests" not in data and not data.get("scenarios"):
        raise loc.at("tests").error("required field is missing")
    tests = (
        collect_tests(data["tests"], loc.at("tests"), files, notes) if data.get("tests") is not None else []
    )
    tests += _scenario_tests(data, loc, files, notes)
    if data.get("nunjucksFilters"):
        notes.warn(
            loc.at("nunjucksFilters"), "custom Nunjucks filters (JavaScript) are not available to templates"
        )
    return cases_of(tests, default, files, notes, env)


def parse_tests_file(data: list[Any], file: Path, notes: Notes) -> list[tuple[Case, Loc]]:
    """Parse a standalone promptfoo tests file: a list of ``{vars, assert, description}``."""
    tests = [Test(item, Loc(file, (i,)), i + 1, file.parent) for i, item in enumerate(data)]
    for test in tests:
        if not isinstance(test.data, dict):
            raise test.loc.error(
                f"expected a test (a mapping with vars and assert), got {type_name(test.data)}"
            )
    return cases_of(tests, _NO_DEFAULT, FileScope(file.parent), notes)


def parse_jsonl_tests(rows: list[tuple[Any, Loc]], file: Path, notes: Notes) -> list[tuple[Case, Loc]]:
    """Parse a promptfoo JSONL tests file (one test per line)."""
    tests = []
    for i, (row, loc) in enumerate(rows):
        if not isinstance(row, dict):
            raise loc.error(f"expected a test (a mapping with vars and assert), got {type_name(row)}")
        tests.append(Test(row, loc, i + 1, file.parent))
    return cases_of(tests, _NO_DEFAULT, FileScope(file.parent), notes)


def parse_csv_file(file: Path, notes: Notes) -> list[tuple[Case, Loc]]:
    """Parse a promptfoo CSV tests file."""
    return parse_tests_ref(str(file), file.parent, notes)


def parse_tests_ref(ref: str, base: Path, notes: Notes) -> list[tuple[Case, Loc]]:
    """The cases of the tests a path names (a CSV file, a generator script, ...), relative to ``base``."""
    files = FileScope(base)
    return cases_of(
        tests_from_ref(ref, Loc(resolve(ref.removeprefix("file://"), base)), files, notes),
        _NO_DEFAULT,
        files,
        notes,
    )
