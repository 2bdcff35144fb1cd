"""``load_cases``: read case files in any supported format, validate every check, return Cases."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.cases import native, promptfoo, skill_creator
from assay.cases._common import Loc, read_data, read_text, type_name, validate_check
from assay.errors import ConfigError
from assay.model import Case, CheckSpec

FORMATS_HINT = (
    "expected a list of cases or a mapping with 'cases' (assay), 'evals' (skill-creator evals.json) "
    "or 'tests' (promptfoo)"
)


def _is_promptfoo_list(items: list[Any]) -> bool:
    """A list without ids whose entries carry promptfoo's ``vars`` / ``assert`` is a promptfoo tests file."""
    mappings = [item for item in items if isinstance(item, dict)]
    return (
        bool(mappings)
        and not any("id" in item for item in mappings)
        and any("assert" in item or "vars" in item for item in mappings)
    )


def load_file(path: Path) -> list[tuple[Case, Loc]]:
    """Load one case file, detecting its format; each case comes with where it was defined."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return native.parse_jsonl(read_text(path), path)
    if suffix == ".csv":
        return promptfoo.parse_csv_file(path)
    data = read_data(path)
    if isinstance(data, dict):
        if "evals" in data:
            return skill_creator.parse_evals_file(data, path)
        if "tests" in data:
            return promptfoo.parse_config(data, path)
        if "cases" in data:
            return native.parse_document(data, path)
        raise ConfigError(f"cannot tell the format: {FORMATS_HINT}", file=path)
    if isinstance(data, list):
        if _is_promptfoo_list(data):
            return promptfoo.parse_tests_file(data, path)
        return native.parse_document(data, path)
    if data is None:
        raise ConfigError(f"the file is empty; {FORMATS_HINT}", file=path)
    raise ConfigError(f"got a {type_name(data)} at the top level; {FORMATS_HINT}", file=path)


def load_cases(paths: list[Path], *, default_checks: Sequence[CheckSpec] = ()) -> list[Case]:
    """Load cases from native YAML/JSON/JSONL, skill-creator ``evals.json`` and promptfoo files.

    The format is detected per file (see docs/cases.md). Every check is validated by building it, and
    ``default_checks`` (validated too) are appended to every case. Case ids must be unique across all
    files; ``Case.source`` is the file the case came from. Any problem raises a one-line ConfigError
    naming the file and the field.
    """
    for i, spec in enumerate(default_checks):
        validate_check(spec, Loc(None, ("checks", i)))
    cases: list[Case] = []
    seen: dict[str, Loc] = {}
    for path in paths:
        path = Path(path)
        loaded = load_file(path)
        if not loaded:
            raise ConfigError(f"no cases found; {FORMATS_HINT}", file=path)
        for case, loc in loaded:
            if case.id in seen:
                first = seen[case.id]
                raise loc.at("id").error(
                    f"duplicate case id {case.id!r} (also in {first.file}: {first.field})"
                )
            seen[case.id] = loc
            case.checks.extend(spec.model_copy(deep=True) for spec in default_checks)
            cases.append(case)
    return cases
