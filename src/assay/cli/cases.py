"""``assay cases FILE...``: what assay understood of your case files, without running anything of yours but
the suite's own loaders."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.text import Text

from assay.cli.console import make_console
from assay.cli.exits import CONFIG, OK
from assay.errors import ConfigError
from assay.words import plural

if TYPE_CHECKING:  # the loaders import every format's checks: only when the command runs (start-up time)
    from assay.cases.loader import LoadedFile
    from assay.model import CheckSpec

out = make_console()
VALUE_CHARS = 60


def short_value(spec: CheckSpec) -> str:
    """A check's value in a few words, for a listing: text clipped, lists and mappings as compact JSON."""
    value = spec.value
    if value is None:
        return ""
    if spec.type == "assert_set" and isinstance(value, list):
        return ", ".join(str(item.get("type", "?")) for item in value if isinstance(item, dict))
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def check_entry(spec: CheckSpec) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": spec.label(), "value": short_value(spec)}
    if spec.threshold is not None:
        entry["threshold"] = spec.threshold
    if spec.weight != 1.0:
        entry["weight"] = spec.weight
    return entry


def file_document(path: Path, loaded: LoadedFile | None, error: str | None) -> dict[str, Any]:
    """One file's entry of ``--json``."""
    if loaded is None:
        return {"file": str(path), "ok": False, "error": error, "format": None, "cases": [], "warnings": []}
    return {
        "file": str(path),
        "ok": True,
        "error": None,
        "format": loaded.format,
        "cases": [
            {"id": case.id, "checks": [check_entry(s) for s in case.checks], "unjudged": not case.judged}
            for case, _ in loaded.cases
        ],
        "warnings": loaded.warnings,
    }


def load_one(path: Path, checks: Sequence[CheckSpec] = ()) -> tuple[LoadedFile | None, str | None]:
    """One file as loaded (its warnings end with the note naming its unjudged cases), or its error; ``checks``
    (a config's ``checks:``) are appended to every case, as an evaluation appends them."""
    from assay.cases.loader import read_case_file, unjudged_note

    try:
        loaded = read_case_file(path)
    except ConfigError as exc:
        return None, str(exc)
    if checks:
        loaded.cases = [
            (case.model_copy(update={"checks": [*case.checks, *checks]}), loc) for case, loc in loaded.cases
        ]
    if (note := unjudged_note(loaded)) is not None:
        loaded.warnings.append(note)
    return loaded, None


def config_case_files(config: Path) -> tuple[list[Path], list[CheckSpec]]:
    """The case files ``config`` lists (``cases.files`` and ``cases.dev_files``) and the checks it appends to
    every case, or ``config`` itself when it is a promptfoo config (its tests are its cases)."""
    from assay.config import is_promptfoo_config, load_config, read_yaml

    if config.is_file() and is_promptfoo_config(read_yaml(config)):
        return [config], []
    loaded = load_config(config)
    return [loaded.base_dir / name for name in loaded.cases.all_files], list(loaded.checks)


def _print_file(path: Path, loaded: LoadedFile | None, error: str | None) -> None:
    if loaded is None:
        out.print(Text("error:", style="red"), error or "", highlight=False, soft_wrap=True)
        return
    unjudged = len(loaded.unjudged)
    summary = f"{path} ({loaded.format}): {plural(len(loaded.cases), 'case')}"
    if unjudged:
        summary += f", {unjudged} unjudged (no checks)"
    out.print(Text(summary, style="bold"), highlight=False, soft_wrap=True)
    for case, _ in loaded.cases:
        checks = (
            ", ".join(f"{spec.label()} {short_value(spec)}".rstrip() for spec in case.checks)
            or "UNJUDGED: no checks"
        )
        out.print(f"  {case.id}: {checks}", highlight=False, soft_wrap=True)
    for warning in loaded.warnings:
        out.print(Text("  warning:", style="yellow"), warning, highlight=False, soft_wrap=True)


def cases_command(
    files: list[Path] | None = typer.Argument(
        None,
        metavar="FILE",
        help="Case files: native YAML/JSON/JSONL, evals.json, promptfoo (default: the case files of -c).",
        show_default=False,
    ),
    config: Path | None = typer.Option(
        None,
        "--config",
        "-c",
        help="The case files this config lists (an assay.yaml), or the promptfoo config itself, as `assay eval`"
        " takes -c (default, without FILE: assay.yaml).",
        envvar="ASSAY_CONFIG",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print {files: [{file, ok, error, cases, warnings}]}."
    ),
) -> None:
    """Load case files and show what assay understood: per file its cases, each case's checks (type and a
    short value) and every warning (a field not used, a feature assay does not have). The files are those
    given, or those the config given with -c (as `assay eval -c` takes it; default assay.yaml) lists. No model
    and no artifact is run; a test generator, var loader or transformVars that a file names (Python or
    JavaScript) is the suite's own code and does run, as it does for promptfoo. Exit 0 when every file
    loads, 2 otherwise."""
    if files and config is not None:
        raise typer.BadParameter("give case files or a config (-c), not both", param_hint="--config")
    if files:
        results = [(path, *load_one(path)) for path in files]
    else:
        paths, checks = config_case_files(config or Path("assay.yaml"))
        results = [(path, *load_one(path, checks)) for path in paths]
    if as_json:
        document = {"files": [file_document(path, loaded, error) for path, loaded, error in results]}
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        for path, loaded, error in results:
            _print_file(path, loaded, error)
    raise typer.Exit(OK if all(loaded is not None for _, loaded, _ in results) else CONFIG)


def register(app: typer.Typer) -> None:
    app.command("cases")(cases_command)
