"""From promptfoo tests to assay cases: defaultTest merged in, vars transformed and expanded, files read.

For each test, as promptfoo prepares it: ``defaultTest``'s ``vars`` go under the test's, its ``assert``
list comes first, its ``options`` and ``threshold`` are the defaults; ``options.transformVars`` (or
defaultTest's) rewrites the vars (JavaScript in Node, or ``file://x.py``: the suite's code, run while
loading); then vars expand — a list of strings, or a ``file://`` glob, makes one case per value (per
combination when several vars do; ``options.disableVarExpansion`` turns it off) — and ``file://`` var
values are read (see :mod:`assay.cases.promptfoo.files`), a trailing newline removed. Assertions are then
read with those vars (see :mod:`assay.cases.promptfoo.assertions`).

Ids: the slugged ``description`` when unique within the config, else ``<file-stem>-<n>`` with ``n`` the
test's position in its file; an expanded test adds ``-1``, ``-2``, ... per combination.
"""

from __future__ import annotations

import glob
import itertools
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.cases._common import Loc, Notes, expect_list, expect_mapping, number, slugify, type_name
from assay.cases.promptfoo.assertions import Scope, map_assertion
from assay.cases.promptfoo.files import FileScope, file_ref, named_at, read_structured, read_var_file, resolve
from assay.cases.promptfoo.sources import Test
from assay.checks.node import JsCall, NodeError, call_js_many, node_binary, split_file_ref
from assay.errors import ConfigError
from assay.model import Case, CheckSpec

TEST_KEYS = frozenset(("vars", "assert", "description", "threshold", "options", "metadata"))
# Test fields that change nothing about judging an output in assay, and what to tell the author.
UNUSED_TEST_KEYS = {
    "provider": "a test's own provider is not used: assay's runner makes every output",
    "providers": "a test's provider filter is not used: assay's runner makes every output",
    "prompts": "a test's prompt filter is not used: the runner's prompt is the artifact",
    "providerOutput": "a fixed providerOutput is not used: assay judges the runner's output",
    "assertScoringFunction": "assertScoringFunction is not applied: the case passes when every check passes "
    "(or its threshold is met)",
}
OPTION_KEYS = frozenset(("transform", "transformVars", "rubricPrompt", "factuality", "disableVarExpansion"))
UNUSED_OPTIONS = {
    "provider": "the grading provider is not used: assay's judge model grades",
    "prefix": "prompt prefixes are not applied (edit the prompt artifact instead)",
    "suffix": "prompt suffixes are not applied (edit the prompt artifact instead)",
}


def _vars_of(value: Any, loc: Loc, folder: Path) -> dict[str, Any]:
    """A test's ``vars``: a mapping, or ``file://`` path(s) of YAML/JSON mappings merged in order."""
    if value is None:
        return {}
    refs = [value] if isinstance(value, str) else value
    if isinstance(refs, list) and refs and all(isinstance(r, str) for r in refs):
        merged: dict[str, Any] = {}
        for ref in refs:
            paths = sorted(glob.glob(str(resolve(ref.removeprefix("file://"), folder)))) or [
                str(resolve(ref.removeprefix("file://"), folder))
            ]
            for path in paths:
                with named_at(loc):
                    data = read_structured(Path(path))
                merged.update(expect_mapping(data, Loc(Path(path)), "a mapping of vars"))
        return merged
    return dict(expect_mapping(value, loc, "a mapping of vars"))


def _asserts(test: Test, files: FileScope) -> tuple[list[Any], Loc]:
    value = test.data.get("assert")
    loc = test.loc.at("assert")
    if (ref := file_ref(value)) is not None:
        with named_at(loc):
            value = read_structured(resolve(ref, files.base))
        loc = Loc(resolve(ref, files.base))
        return expect_list(value, loc, "a list of assertions"), loc
    return expect_list(value or [], loc, "a list of assertions"), loc


def _options(default: Test, test: Test, notes: Notes) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for source in (default, test):
        options = source.data.get("options")
        if options is None:
            continue
        options = expect_mapping(options, source.loc.at("options"), "a mapping of options")
        for key in options:
            if key in UNUSED_OPTIONS:
                notes.warn(source.loc.at("options", key), UNUSED_OPTIONS[key])
            elif key not in OPTION_KEYS:
                notes.warn(source.loc.at("options", key), "not read by assay")
        merged.update(options)
    return merged


@dataclass
class _Prepared:
    """A test with defaultTest merged in, before its vars expand: what ``transformVars`` works on."""

    test: Test
    case_id: str
    variables: dict[str, Any]
    options: dict[str, Any]
    transform_at: Loc | None = None


def _transform_call(code: Any, variables: dict[str, Any], loc: Loc, files: FileScope) -> JsCall | Path:
    """The JavaScript call for a ``transformVars`` (or, for a Python file, its path)."""
    if not isinstance(code, str) or not code.strip():
        raise loc.error(f"expected code or a file:// path, got {type_name(code)}")
    context = {"prompt": {}, "uuid": str(uuid.uuid4())}
    if code.startswith("file://"):
        path, function = split_file_ref(code)
        full = resolve(path, files.base)
        if full.suffix == ".py":
            return full
        return JsCall(args=[variables, context], file=str(full), function=function)
    if node_binary() is None:
        raise loc.error("transformVars runs in Node.js, and `node` is not on PATH")
    return JsCall(args=[variables, context], code=code, params=("vars", "context"))


def _transform_vars(prepared: list[_Prepared], files: FileScope) -> None:
    """Apply each test's ``transformVars`` (the JavaScript ones in one Node process)."""
    pending = [p for p in prepared if p.transform_at is not None]
    calls: list[tuple[_Prepared, JsCall]] = []
    for item in pending:
        assert item.transform_at is not None
        call = _transform_call(item.options["transformVars"], item.variables, item.transform_at, files)
        if isinstance(call, Path):
            from assay.checks.programs import import_file_function

            function = split_file_ref(item.options["transformVars"])[1] or "get_transform"
            context = {"prompt": {}, "uuid": str(uuid.uuid4())}
            try:
                result: Any = import_file_function(call, function)(dict(item.variables), context)
            except ConfigError:
                raise
            except Exception as exc:
                raise item.transform_at.error(f"transformVars raised {type(exc).__name__}: {exc}") from None
            _merge_transformed(item, result)
        else:
            calls.append((item, call))
    try:
        results = call_js_many([call for _, call in calls], cwd=files.base)
    except NodeError as exc:
        assert calls[0][0].transform_at is not None
        raise calls[0][0].transform_at.error(f"transformVars failed: {exc}") from None
    for (item, _), result in zip(calls, results, strict=True):
        if isinstance(result, NodeError):
            assert item.transform_at is not None
            raise item.transform_at.error(f"transformVars failed: {result}")
        _merge_transformed(item, result)


def _merge_transformed(item: _Prepared, result: Any) -> None:
    assert item.transform_at is not None
    if not isinstance(result, dict):
        raise item.transform_at.error(f"transformVars must return a mapping of vars, got {type_name(result)}")
    item.variables = {**item.variables, **result}


def _expand(variables: dict[str, Any], loc: Loc, files: FileScope) -> list[dict[str, Any]]:
    """promptfoo's var combinations: a list of strings, or a ``file://`` glob, gives one value per item."""
    choices: list[list[Any]] = []
    for key, value in variables.items():
        if (ref := file_ref(value)) is not None:
            if any(ch in ref for ch in "*?["):
                found = sorted(
                    glob.glob(ref, root_dir=files.base) if not Path(ref).is_absolute() else glob.glob(ref)
                )
                if not found:
                    raise loc.at(key).error(f"no file matches 'file://{ref}' (relative to {files.base})")
                choices.append([f"file://{p}" for p in found])
            else:
                choices.append([value])
        elif isinstance(value, list) and value and isinstance(value[0], str):
            choices.append(list(value))
        else:
            choices.append([value])
    keys = list(variables)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*choices)]


def _load_files(variables: dict[str, Any], loc: Loc, files: FileScope) -> dict[str, Any]:
    loaded = dict(variables)
    for key, value in variables.items():
        if (ref := file_ref(value)) is not None:
            loaded[key] = read_var_file(ref, key, loc.at(key), files, loaded)
    for key, value in loaded.items():
        if isinstance(value, str) and value.endswith("\n"):
            loaded[key] = value[:-1]
    return loaded


def _threshold(test: Test, default: Test) -> float | None:
    source = test if test.data.get("threshold") is not None else default
    value = source.data.get("threshold")
    if value is None:
        return None
    threshold = number(value, source.loc.at("threshold"))
    if not 0 <= threshold <= 1:
        raise source.loc.at("threshold").error("expected a number between 0 and 1")
    return threshold


def _checks(items: list[tuple[Any, Loc]], scope: Scope) -> list[CheckSpec]:
    specs = (map_assertion(data, loc, scope) for data, loc in items)
    return [spec for spec in specs if spec is not None]


def _prepare(test: Test, case_id: str, default: Test, files: FileScope, notes: Notes) -> _Prepared:
    for key in test.data:
        if key in UNUSED_TEST_KEYS:
            notes.warn(test.loc.at(key), UNUSED_TEST_KEYS[key])
        elif key not in TEST_KEYS:
            notes.warn(test.loc.at(str(key)), "not read by assay")
    variables = _vars_of(default.data.get("vars"), default.loc.at("vars"), files.base)
    variables.update(_vars_of(test.data.get("vars"), test.loc.at("vars"), test.folder))
    options = _options(default, test, notes)
    item = _Prepared(test, case_id, variables, options)
    if options.get("transformVars") is not None:
        where = test if "transformVars" in (test.data.get("options") or {}) else default
        item.transform_at = where.loc.at("options", "transformVars")
    return item


def _cases(item: _Prepared, default: Test, files: FileScope, notes: Notes, env: dict[str, Any]) -> list[Case]:
    """The cases of one prepared test (several when its vars expand)."""
    test, options = item.test, item.options
    combos = (
        [item.variables]
        if options.get("disableVarExpansion")
        else _expand(item.variables, test.loc.at("vars"), files)
    )
    defaults, default_loc = _asserts(default, files)
    own, own_loc = _asserts(test, files)
    threshold = _threshold(test, default)
    cases = []
    for k, combo in enumerate(combos, start=1):
        loaded = _load_files(combo, test.loc.at("vars"), files)
        scope = Scope(files, notes, loaded, options, env)
        items = [(a, default_loc.at(i)) for i, a in enumerate(defaults)]
        items += [(a, own_loc.at(i)) for i, a in enumerate(own)]
        only_input = set(loaded) == {"input"} and isinstance(loaded["input"], str)
        cases.append(
            Case(
                id=item.case_id if len(combos) == 1 else f"{item.case_id}-{k}",
                input=loaded["input"] if only_input else None,
                vars=loaded,
                checks=_checks(items, scope),
                threshold=threshold,
                description=test.description(),
                source=str(test.loc.file),
            )
        )
    return cases


def case_ids(tests: list[Test]) -> list[str]:
    slugs = [slugify(d) if (d := t.description()) else "" for t in tests]
    return [
        slug if slug and slugs.count(slug) == 1 else f"{Path(t.loc.file or 'test').stem}-{t.position}"
        for slug, t in zip(slugs, tests, strict=True)
    ]


def cases_of(
    tests: list[Test], default: Test, files: FileScope, notes: Notes, env: dict[str, Any] | None = None
) -> list[tuple[Case, Loc]]:
    """Turn collected tests into cases, with ``default`` (promptfoo's defaultTest) merged into each."""
    prepared = [
        _prepare(t, cid, default, files, notes) for t, cid in zip(tests, case_ids(tests), strict=True)
    ]
    _transform_vars(prepared, files)
    return [
        (case, item.test.loc) for item in prepared for case in _cases(item, default, files, notes, env or {})
    ]
