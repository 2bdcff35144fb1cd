"""``assay eval -c promptfooconfig.yaml`` with no assay.yaml: the configuration ``assay init`` would write for
the promptfoo config (:mod:`assay.starters.promptfoo`), held in memory, so a promptfoo suite runs as it is.

Nothing is written into the project beyond what every evaluation writes (the data directory, ``.assay/``):

- an inline prompt, which ``init`` writes to ``prompts/prompt-<n>.txt``, is kept as
  ``.assay/promptfoo/prompts/prompt-<n>.txt`` (the artifact the static tier checks and the ``llm`` runner
  reads; read-only, as the data directory is part of the answer key); a runner that goes through the bridge
  gets its text with the call;
- a provider that ``init`` calls through ``assay_provider.py`` (``exec:``, ``python:``, ``file://``,
  ``echo``) is called by :func:`assay.cases.promptfoo_bridge.run` instead, the call given in
  ``$ASSAY_PROMPTFOO_PROVIDER`` (the runner's ``env``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from assay.cases._common import read_data
from assay.cases.promptfoo_bridge import PROVIDER_ENV
from assay.config import (
    AssayConfig,
    LLMRunnerConfig,
    PythonRunnerConfig,
    is_promptfoo_config,
    load_config,
    validation_error,
)
from assay.errors import ConfigError
from assay.fsutil import atomic_write_text
from assay.starters.promptfoo import MODULE, Plan, config_document, find_config, plan_promptfoo

DEFAULT_NAME = "assay.yaml"
INLINE_DIR = "promptfoo"  # under the data directory
BRIDGE_FUNCTION = "assay.cases.promptfoo_bridge:run"
# The sections of the configuration made for a promptfoo config, by the promptfoo field they come from.
PROMPTFOO_FIELDS = {"runner": "providers[0]", "judge": "defaultTest.options.provider", "artifact": "prompts"}


@dataclass
class EvalConfig:
    """The configuration an evaluation runs with, what to tell the user about it (``lines``), and whether
    it was made for a promptfoo config (``promptfoo``)."""

    config: AssayConfig
    lines: list[str] = field(default_factory=list)
    promptfoo: bool = False

    @contextmanager
    def terms(self) -> Iterator[None]:
        """Errors about a configuration made for a promptfoo config, in that config's terms: the runner is
        its first provider, the judge its grading provider, the artifact its prompts."""
        try:
            yield
        except ConfigError as exc:
            section = (exc.field or "").split(".")[0].split("[")[0]
            if not self.promptfoo or exc.file != str(self.config.path) or section not in PROMPTFOO_FIELDS:
                raise
            message = exc.message
            if section == "judge" and self.config.judge is None:
                message = (
                    "model-graded assertions (llm-rubric, factuality, ...) need a grading model: set"
                    " defaultTest.options.provider, e.g. openai:gpt-4o-mini"
                )
            raise ConfigError(message, file=exc.file, field=PROMPTFOO_FIELDS[section]) from None


def load_eval_config(path: str | Path) -> EvalConfig:
    """The configuration to evaluate ``path`` with: an assay.yaml as :func:`assay.config.load_config` reads
    it, or a promptfoo config run as it is. A missing ``assay.yaml`` in a folder with a
    ``promptfooconfig.yaml`` means that config, as ``promptfoo eval`` finds it."""
    path = Path(path)
    if path.name == DEFAULT_NAME and not path.exists() and (found := find_config(path.parent)) is not None:
        made = promptfoo_config(found)
        made.lines[0] = f"no {DEFAULT_NAME}: {made.lines[0]}"
        return made
    if path.is_file() and path.suffix.lower() in (".yaml", ".yml", ".json"):
        try:
            data = read_data(path)
        except ConfigError:
            data = None  # load_config reports it as it reports any unreadable assay.yaml
        if is_promptfoo_config(data):
            return promptfoo_config(path)
    return EvalConfig(load_config(path))


def promptfoo_config(path: Path) -> EvalConfig:
    """The configuration ``assay init`` would write for the promptfoo config ``path``, with nothing written
    into its folder but the data directory (see the module docstring), and the lines that say so."""
    path = path.resolve()
    plan = plan_promptfoo(path.parent, path)
    document = config_document(plan, path.name, path.name)
    if document["runner"]["type"] == "llm" and document["runner"].get("model") is None:
        raise ConfigError(
            f"provider {plan.provider or '(none)'} has no assay equivalent; `assay init` writes an assay.yaml"
            " whose runner.model you set (e.g. openai:gpt-4o-mini)",
            file=path,
            field="providers[0]",
        )
    try:
        config = AssayConfig.model_validate(document)
    except ValidationError as exc:
        raise validation_error(exc, path) from None
    config.path = path
    config.check_data_path()
    kept = _for_eval(config, plan)
    notes = list(plan.notes)
    for name, where in kept.items():
        notes = [note.replace(name, where) for note in notes]
    head = (
        f"{path.name}: a promptfoo config, run as `assay init` would set it up (artifact"
        f" {', '.join(config.artifact.paths)}; provider {plan.provider or '(none)'}); `assay init` writes"
        " that assay.yaml, for `assay evolve`"
    )
    return EvalConfig(config, [head, *(f"  note: {note}" for note in notes)], promptfoo=True)


def _for_eval(config: AssayConfig, plan: Plan) -> dict[str, str]:
    """Write the inline prompts into the data directory and point the artifact and the runner at them; give
    a bridge call its prompt's text and leave ``assay_provider.py`` out. Returns where each prompt went."""
    kept: dict[str, str] = {}
    for name, text in plan.new_prompts.items():
        target = config.ensure_data_path() / INLINE_DIR / name
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, text if text.endswith("\n") else text + "\n")
        kept[name] = target.relative_to(config.artifact_dir).as_posix()
    config.artifact.paths = [kept.get(p, p) for p in config.artifact.paths]
    # Read-only too: they lie in the data directory, which no editable file may (eval edits nothing anyway).
    forbid = [p for p in config.artifact.forbid if p != MODULE]
    config.artifact.forbid = [*forbid, *kept.values()]
    runner = config.runner
    if isinstance(runner, LLMRunnerConfig) and runner.prompt in kept:
        runner.prompt = kept[runner.prompt]
    if isinstance(runner, PythonRunnerConfig) and plan.bridge is not None:
        arguments = dict(plan.bridge.arguments)
        if arguments.get("prompt") in plan.new_prompts:
            arguments["inline"] = plan.new_prompts[arguments["prompt"]]
        call = {"function": plan.bridge.function, "arguments": arguments}
        runner.function = BRIDGE_FUNCTION
        runner.env = {**runner.env, PROVIDER_ENV: json.dumps(call, ensure_ascii=False, default=str)}
    return kept
