"""Starter files for ``assay init`` in a folder without ``assay.yaml``: an ``assay.yaml`` whose runner uses the
artifact, a cases file with example cases, and the next step to take.

What the folder holds decides the starter: a promptfoo config → its prompts as the artifact and its first
provider as the runner (see :mod:`assay.starters.promptfoo`); ``SKILL.md`` → a skill run by an agent CLI; a script (``.py``,
``.sh``, ``.js``) → a command runner calling it; a prompt (``.md``, ``.txt``, ``.prompt``) → an llm runner whose
one missing line is ``runner.model``; nothing of these → a placeholder ``program.py`` with the script starter.
Files that exist are never overwritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from string import Template

from assay.install import install_hint
from assay.local_options import parse_options
from assay.model import Case
from assay.starters.fewshot import fewshot_files, is_local, template_names

SCRIPTS = {".py": "python3", ".sh": "bash", ".js": "node"}
PROMPTS = (".md", ".txt", ".prompt")
CASE_FILES = (
    "evals/evals.json",
    "evals.json",
    "cases.yaml",
    "cases.yml",
    "cases.jsonl",
    "promptfooconfig.yaml",
    "promptfooconfig.yml",
)
NOT_ARTIFACTS = (
    "readme",
    "license",
    "licence",
    "changelog",
    "contributing",
    "notice",
    "requirements",
    "setup.py",
)
CASES = "cases.yaml"
PLACEHOLDER = "program.py"


@dataclass
class Starter:
    """The files written (names relative to the folder), what was chosen and the next step."""

    kind: str
    artifact: str
    written: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    next_step: str = ""
    notes: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)  # what `assay eval` would stop at, all of it (a skill's)


def _template(name: str) -> str:
    return files("assay.starters").joinpath("templates", name).read_text(encoding="utf-8")


def _candidates(directory: Path, suffixes: tuple[str, ...], skip: set[str]) -> list[str]:
    found = []
    for path in sorted(directory.iterdir()):
        name = path.name
        lowered = name.lower()
        if (
            path.is_file()
            and path.suffix in suffixes
            and name not in skip
            and not name.startswith((".", "_", "test_", "conftest"))
            and not lowered.startswith(NOT_ARTIFACTS)
        ):
            found.append(name)
    return found


def write_starter(directory: Path, config_name: str = "assay.yaml", model: str | None = None) -> Starter:
    """Write the starter for ``directory`` (which has no ``config_name``) and return what was done. ``model``
    fills a prompt starter's ``runner.model``; a ``local:`` one gets the completion-style starter."""
    from assay.starters.promptfoo import find_config, write_promptfoo_starter

    promptfoo_config = find_config(directory)
    if promptfoo_config is not None:
        plan, written = write_promptfoo_starter(directory, config_name, promptfoo_config)
        return Starter(
            kind="promptfoo",
            artifact=plan.prompts[0],
            written=written,
            others=plan.prompts[1:],
            next_step=plan.next_step,
            notes=plan.notes,
        )
    cases = next((name for name in CASE_FILES if (directory / name).is_file()), CASES)
    skip = {config_name, Path(cases).name}
    if (directory / "SKILL.md").is_file():
        starter = Starter(kind="skill", artifact="SKILL.md")
        config, cases_template = "skill.assay.yaml", "prompt.cases.yaml"
        starter.next_step = (
            f"check runner.command in {config_name} (an agent CLI that has the skill), then `assay eval`"
        )
        command = ""
    elif scripts := _candidates(directory, tuple(SCRIPTS), skip):
        starter = Starter(kind="code", artifact=scripts[0], others=scripts[1:])
        config, cases_template = "script.assay.yaml", "script.cases.yaml"
        command = f"{SCRIPTS[Path(scripts[0]).suffix]} {scripts[0]} {{input}}"
        starter.next_step = (
            f"`assay eval` runs the example cases; then write cases that say what {scripts[0]} should print"
        )
    elif (prompts := _candidates(directory, PROMPTS, skip)) and is_local(model):
        assert model is not None
        return _local_starter(directory, config_name, prompts, cases, model)
    elif prompts:
        starter = Starter(kind="prompt", artifact=prompts[0], others=prompts[1:])
        config, cases_template = "prompt.assay.yaml", "prompt.cases.yaml"
        command = ""
        starter.next_step = f"set runner.model in {config_name} (the one line to edit), then `assay eval`"
        if model:
            starter.next_step = "`assay eval` runs the cases"
    else:
        starter = Starter(kind="code", artifact=PLACEHOLDER)
        config, cases_template = "script.assay.yaml", "script.cases.yaml"
        command = f"python3 {PLACEHOLDER} {{input}}"
        starter.next_step = (
            f"`assay eval` runs the example cases on the placeholder {PLACEHOLDER}; replace it with your program"
            " and write cases that say what it should print"
        )
        if not (directory / PLACEHOLDER).exists():
            (directory / PLACEHOLDER).write_text(_template("program.py"), encoding="utf-8")
            starter.written.append(PLACEHOLDER)
    values = {
        "artifact": starter.artifact,
        "cases": cases,
        "command": command,
        "llm_install": install_hint("llm"),
        "local_install": install_hint("local"),
    }
    if not (directory / cases).exists():
        (directory / cases).write_text(
            Template(_template(cases_template)).substitute(values), encoding="utf-8"
        )
        starter.written.append(cases)
    text = Template(_template(config)).substitute(values)
    if model and starter.kind == "prompt":
        text = text.replace("\n  model:\n", f"\n  model: {_quoted(model)}\n", 1)
    elif model:
        starter.notes.append(
            f"--model applies to a prompt starter; {config_name} names no model for {starter.kind}"
        )
    (directory / config_name).write_text(text, encoding="utf-8")
    starter.written.append(config_name)
    if starter.kind == "skill":
        starter.needs = _needs(directory / config_name)
    return starter


def _needs(config_path: Path) -> list[str]:
    """What the project at ``config_path`` needs before its cases can run (none known when it does not load:
    `assay eval` then names what is wrong)."""
    from assay.cases.loader import load_case_files
    from assay.config import load_config
    from assay.errors import ConfigError
    from assay.starters.needs import project_needs

    try:
        config = load_config(config_path)
        cases = load_case_files([config.base_dir / f for f in config.cases.all_files]).cases
    except ConfigError:
        return []
    return project_needs(config, cases)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _local_starter(directory: Path, config_name: str, prompts: list[str], cases: str, model: str) -> Starter:
    """The completion-style starter for a local base model (see :mod:`assay.starters.fewshot`)."""
    from assay.cases.loader import load_cases

    artifact = prompts[0]
    template, pool = template_names(artifact)
    starter = Starter(kind="prompt", artifact=template, others=prompts[1:])
    loaded: list[Case] = []
    if (directory / cases).is_file():
        loaded = load_cases([directory / cases])
    else:
        (directory / cases).write_text(_template("prompt.cases.yaml"), encoding="utf-8")
        starter.written.append(cases)
    instruction = (directory / artifact).read_text(encoding="utf-8", errors="replace")
    shots = fewshot_files(instruction, loaded)
    for name, text in ((template, shots.prompt), (pool, shots.pool)):
        if (directory / name).exists():
            starter.notes.append(f"{name} exists and was kept as it is")
        else:
            (directory / name).write_text(text, encoding="utf-8")
            starter.written.append(name)
    checks = (
        "\nchecks:                       # the answer must be the case's label (`expected`), any case\n"
        "  - {type: equals, options: {ignore_case: true}}\n"
        if shots.needs_label_check
        else ""
    )
    values = {
        "artifact": artifact,
        "cases": cases,
        "template": template,
        "pool": pool,
        "model": model,
        "model_url": with_stop(model),
        "examples": str(shots.examples),
        "checks": checks,
    }
    text = Template(_template("prompt.local.assay.yaml")).substitute(values)
    (directory / config_name).write_text(text, encoding="utf-8")
    starter.written.append(config_name)
    starter.notes.append(
        f"{model} is a base model: {template} is the completion-style form of {artifact} "
        f"(your instruction, {shots.examples} examples from your dev cases, the query); {artifact} is unchanged"
    )
    if not shots.examples:
        starter.notes.append(
            f"no dev case of {cases} has a label (`expected`, or one equals, contains, icontains or starts_with"
            " check with a short value): add labelled cases for the examples"
        )
    starter.next_step = "`assay init` again (the split and the baseline), then `assay eval`"
    return starter


def with_stop(model: str) -> str:
    """``model`` with a newline stop, unless it sets a ``stop`` of its own."""
    try:
        if parse_options(model.removeprefix("local:")).stop:
            return model
    except ValueError:  # a bad option: `assay eval` reports it, in one line, when it builds the model
        return model
    return model + ("&" if "?" in model else "?") + "stop=%0A"


_HEADER = re.compile(r"\A# Written by `assay init` for (?P<artifact>\S+)\. ")
_MODEL = re.compile(r"^  model:[ \t]*(?P<model>\S.*?)[ \t]*$", re.M)
_CASES = re.compile(r"^cases:\n  files: \[(?P<cases>[^\],]+)\]", re.M)


def local_upgrade(directory: Path, config_name: str) -> Starter | None:
    """``assay init`` again after setting a ``local:`` model in the chat starter: when ``config_name`` is that
    starter exactly as written but for its model line, write the completion-style starter in its place (see
    :mod:`assay.starters.fewshot`) and return it; otherwise None (a file the user changed is never rewritten)."""
    path = directory / config_name
    text = path.read_text(encoding="utf-8", errors="replace")
    header, set_model, cases = _HEADER.match(text), _MODEL.search(text), _CASES.search(text)
    if header is None or set_model is None or cases is None:
        return None
    model = set_model.group("model").strip("'\"")
    if not is_local(model):
        return None
    values = {
        "artifact": header.group("artifact"),
        "cases": cases.group("cases").strip(),
        "command": "",
        "llm_install": install_hint("llm"),
        "local_install": install_hint("local"),
    }
    as_written = Template(_template("prompt.assay.yaml")).substitute(values)
    if _MODEL.sub("  model:", text, count=1) != as_written:
        return None
    if not (directory / values["artifact"]).is_file():
        return None
    return _local_starter(directory, config_name, [values["artifact"]], values["cases"], model)
