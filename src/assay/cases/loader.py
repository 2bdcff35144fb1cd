"""``load_cases``: read case files in any supported format, validate every check, return Cases.

The format is told by the file's shape, not its name alone (see docs/cases.md): a promptfoo config or
tests file, a skill-creator ``evals.json`` in any of the shapes found in public skills, or assay's
native format. Loading also reports what it could not take as its author meant it (warnings), and the
cases that have no checks at all: those are *unjudged*, left out of pass rates and scores, and an error
under ``cases.require_checks``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.cases import native
from assay.cases._common import Loc, Notes, read_data, type_name, validate_check
from assay.errors import ConfigError
from assay.gcpause import full_collections_held
from assay.model import Case, CheckSpec

FORMATS_HINT = (
    "expected a list of cases or a mapping with 'cases' (assay), 'evals' (skill-creator evals.json) "
    "or 'tests' (promptfoo)"
)
SHOWN_IDS = 10
DATA_SUFFIXES = frozenset((".yaml", ".yml", ".json"))  # read as data, whatever their shape


@dataclass
class LoadedFile:
    """One case file as read: its format (``native``, ``skill-creator``, ``promptfoo``), its cases with
    where each was defined, and its warnings."""

    path: Path
    format: str
    cases: list[tuple[Case, Loc]]
    warnings: list[str] = field(default_factory=list)

    @property
    def unjudged(self) -> list[Case]:
        return [case for case, _ in self.cases if not case.judged]


@dataclass
class CaseLoad:
    """Every case of the files given, in order, and every warning raised while reading them."""

    cases: list[Case]
    files: list[LoadedFile]
    warnings: list[str] = field(default_factory=list)

    @property
    def unjudged(self) -> list[Case]:
        return [case for case in self.cases if not case.judged]


def _is_trigger_set(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(q, dict) and "should_trigger" in q for q in value)
    )


def _promptfoo() -> Any:
    """The promptfoo reader, imported when a file may be promptfoo's: it brings the assertion mapping and its
    templates, which a native case file does not need."""
    from assay.cases import promptfoo

    return promptfoo


def _has_ids(items: Iterable[Any]) -> bool:
    """Whether some entry has an ``id``: then it is no promptfoo tests list (their tests have none)."""
    return any(isinstance(item, dict) and "id" in item for item in items)


def _detect(data: Any, path: Path) -> str:
    if isinstance(data, dict):
        if "evals" in data:
            return "skill-creator"
        if "tests" in data:
            return "promptfoo" if _promptfoo().looks_like_config(data) else "skill-creator"
        if "cases" in data:
            return "native" if native.looks_native(data) else "skill-creator"
        if "test_cases" in data:
            return "skill-creator"
        if data.get("scenarios") and _promptfoo().looks_like_config(data):
            return "promptfoo"
        if _is_trigger_set(data.get("queries")):
            raise ConfigError(
                "a skill-creator trigger eval set (queries with should_trigger) tests whether a skill's "
                "description makes it trigger; assay judges outputs, so it is not read (give cases "
                "with a prompt and expectations)",
                file=path,
                field="queries",
            )
        raise ConfigError(f"cannot tell the format: {FORMATS_HINT}", file=path)
    if isinstance(data, list):
        if not _has_ids(data) and _promptfoo().looks_like_tests(data):
            return "promptfoo"
        return "native" if native.looks_native(data) else "skill-creator"
    if data is None:
        raise ConfigError(f"the file is empty; {FORMATS_HINT}", file=path)
    raise ConfigError(f"got a {type_name(data)} at the top level; {FORMATS_HINT}", file=path)


def read_case_file(path: Path, notes: Notes | None = None) -> LoadedFile:
    """Load one case file, detecting its format; each case comes with where it was defined. Raises a
    one-line ConfigError naming the file and field for anything that cannot be read."""
    notes = notes if notes is not None else Notes()
    suffix = path.suffix.lower()
    if suffix == ".csv":
        fmt, cases = "promptfoo", _promptfoo().parse_csv_file(path, notes)
    elif suffix == ".jsonl":
        fmt, cases = _read_jsonl(path, notes)
    elif suffix not in DATA_SUFFIXES and suffix in _promptfoo().SCRIPT_SUFFIXES:
        fmt, cases = "promptfoo", _promptfoo().parse_tests_ref(f"file://{path.name}", path.parent, notes)
    else:
        data = read_data(path)
        fmt = _detect(data, path)
        if fmt == "promptfoo":
            if isinstance(data, dict):
                cases = _promptfoo().parse_config(data, path, notes)
            else:
                cases = _promptfoo().parse_tests_file(data, path, notes)
        elif fmt == "skill-creator":
            from assay.cases import skill_creator

            cases = skill_creator.parse_document(data, path, notes)
        else:
            cases = native.parse_document(data, path)
    return LoadedFile(path, fmt, cases, notes.lines(path))


def _read_jsonl(path: Path, notes: Notes) -> tuple[str, list[tuple[Case, Loc]]]:
    """A JSONL file read as a stream: promptfoo tests have no ids, so the rows are held only until the first
    one with an ``id`` says the file is native; from there each row becomes a case as it is read."""
    rows = native.read_jsonl(path)
    held: list[tuple[Any, Loc]] = []
    for row, loc in rows:
        held.append((row, loc))
        if isinstance(row, dict) and "id" in row:
            return "native", native.parse_rows(itertools.chain(held, rows))
    if _promptfoo().looks_like_tests([row for row, _ in held]):
        return "promptfoo", _promptfoo().parse_jsonl_tests(held, path, notes)
    return "native", native.parse_rows(held)


def unjudged_note(loaded: LoadedFile) -> str | None:
    """The warning that names a file's cases without checks (None when every case has one)."""
    ids = [case.id for case in loaded.unjudged]
    if not ids:
        return None
    shown = ", ".join(ids[:SHOWN_IDS]) + (
        f", ... ({len(ids) - SHOWN_IDS} more)" if len(ids) > SHOWN_IDS else ""
    )
    what = "1 case has" if len(ids) == 1 else f"{len(ids)} cases have"
    return f"{loaded.path}: {what} no checks, so they are unjudged (left out of pass rate and score): {shown}"


def load_case_files(
    paths: Sequence[Path], *, default_checks: Sequence[CheckSpec] = (), require_checks: bool = False
) -> CaseLoad:
    """Load cases from native YAML/JSON/JSONL, skill-creator ``evals.json`` and promptfoo files.

    The format is detected per file (see docs/cases.md). Every check is validated by building it, and
    ``default_checks`` (validated too) are appended to every case. Case ids must be unique across all
    files; ``Case.source`` is the file the case came from. A case left without checks is unjudged and
    named in a warning; with ``require_checks`` it is an error. Any problem raises a one-line ConfigError
    naming the file and the field.
    """
    for i, spec in enumerate(default_checks):
        validate_check(spec, Loc(None, ("checks", i)))
    with full_collections_held():
        return _load(paths, default_checks, require_checks)


def _load(paths: Sequence[Path], default_checks: Sequence[CheckSpec], require_checks: bool) -> CaseLoad:
    cases: list[Case] = []
    files: list[LoadedFile] = []
    warnings: list[str] = []
    seen: dict[str, Loc] = {}
    for path in paths:
        loaded = read_case_file(Path(path))
        if not loaded.cases:
            raise ConfigError(f"no cases found; {FORMATS_HINT}", file=loaded.path)
        for case, loc in loaded.cases:
            if case.id in seen:
                first = seen[case.id]
                raise loc.at("id").error(
                    f"duplicate case id {case.id!r} (also in {first.file}: {first.field})"
                )
            seen[case.id] = loc
            if default_checks:
                case.checks.extend(spec.model_copy(deep=True) for spec in default_checks)
            cases.append(case)
        if require_checks and loaded.unjudged:
            ids = [case.id for case in loaded.unjudged]
            first_loc = next(loc for case, loc in loaded.cases if case.id == ids[0])
            raise first_loc.error(
                f"{len(ids)} case(s) have no checks ({', '.join(ids[:SHOWN_IDS])}) and cases.require_checks "
                "is set: give each case a check, or drop require_checks to run them unjudged"
            )
        files.append(loaded)
        warnings.extend(loaded.warnings)
        if (note := unjudged_note(loaded)) is not None:
            warnings.append(note)
    return CaseLoad(cases, files, warnings)


def load_cases(paths: Sequence[Path], *, default_checks: Sequence[CheckSpec] = ()) -> list[Case]:
    """The cases of :func:`load_case_files`, without its warnings."""
    return load_case_files(paths, default_checks=default_checks).cases
