"""``assay init`` in a promptfoo project: an ``assay.yaml`` whose artifact is the config's prompts and whose
runner is its first provider, so ``assay init && assay eval`` runs the user's own suite.

- Prompts: files (``file://prompts/a.txt``, globs) are used where they are; inline prompts are written to
  ``prompts/prompt-<n>.txt``. All are the artifact; the runner uses the first (``runner.prompt``), as one
  assay run measures one prompt. Prompt functions (``.py``/``.js``) are skipped, and said so.
- Provider: ``openai:``, ``anthropic:``, ``ollama:``, ``openrouter:``, ``vllm:`` map to the ``llm`` runner in
  template mode (model, temperature, max_tokens, base URL); ``exec:``, ``python:``/``file://*.py``,
  ``file://*.js`` and ``echo`` run through a small module written next to the config
  (``assay_provider.py``, see :mod:`assay.cases.promptfoo_bridge`) on the ``python`` runner. Any other
  provider gets the ``llm`` runner with ``model`` to fill in.
- The judge (for model-graded assertions): the grading provider of ``defaultTest.options.provider`` when it
  maps, else the runner's model when it is one.
"""

from __future__ import annotations

import glob
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from assay.cases._common import read_data
from assay.errors import ConfigError
from assay.install import install_hint

PROMPT_SUFFIXES = (".txt", ".md", ".j2", ".njk", ".prompt", ".tmpl", ".json", ".yaml", ".yml", "")
LLM_PREFIXES = {
    "openai": "openai",
    "anthropic": "anthropic",
    "ollama": "ollama",
    "openrouter": "openrouter",
    "vllm": "vllm",
}
API_STYLES = ("chat", "completion", "messages", "responses", "assistant")
MODULE = "assay_provider.py"
PROVIDER_ENV_ALLOW = ("*_API_KEY", "*_API_BASE", "*_BASE_URL")  # what a provider needs to call a model API
CONFIG_NAMES = ("promptfooconfig.yaml", "promptfooconfig.yml", "promptfooconfig.json")


@dataclass(frozen=True)
class Bridge:
    """A call of :mod:`assay.cases.promptfoo_bridge`: its provider function and keyword arguments."""

    function: str
    arguments: dict[str, Any]

    def source(self) -> str:
        """The call as Python source, in the module ``assay init`` writes."""
        given = "".join(f", {name}={value!r}" for name, value in self.arguments.items())
        return f"{self.function}(case, artifact_dir{given})"


@dataclass
class Plan:
    """What the starter writes: the sections of assay.yaml, files, and what to tell the user."""

    prompts: list[str] = field(default_factory=list)
    new_prompts: dict[str, str] = field(default_factory=dict)  # path -> text, for inline prompts
    runner: dict[str, Any] = field(default_factory=dict)
    bridge: Bridge | None = None  # how the runner calls the provider, when it goes through the bridge
    forbid: list[str] = field(default_factory=list)
    provider_files: list[str] = field(default_factory=list)
    judge: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    next_step: str = ""
    provider: str = ""


def find_config(directory: Path) -> Path | None:
    return next((directory / n for n in CONFIG_NAMES if (directory / n).is_file()), None)


def _prompt_entries(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, dict) and not ({"raw", "id"} & value.keys()):
        return list(value)  # {file://a.txt: label} (promptfoo's older form)
    return value if isinstance(value, list) else [value]


def _prompts(data: dict[str, Any], directory: Path, plan: Plan) -> None:
    for index, entry in enumerate(_prompt_entries(data.get("prompts")), start=1):
        if isinstance(entry, dict):
            entry = entry.get("raw") or entry.get("id")
        if not isinstance(entry, str) or not entry.strip():
            continue
        if not entry.startswith("file://"):
            name = f"prompts/prompt-{index}.txt"
            while (directory / name).exists() and (directory / name).read_text(encoding="utf-8") != entry:
                name = name.replace(".txt", "-new.txt")
            plan.prompts.append(name)
            if not (directory / name).exists():
                plan.new_prompts[name] = entry
            continue
        ref = entry.removeprefix("file://").split(":")[0]
        matches = sorted(glob.glob(ref, root_dir=directory)) if any(c in ref for c in "*?[") else [ref]
        for match in matches:
            suffix = Path(match).suffix.lower()
            if suffix in (".py", ".js", ".ts", ".mjs", ".cjs"):
                plan.notes.append(
                    f"prompt {entry} is a prompt function: assay uses prompt files, so it is skipped"
                )
            elif suffix in PROMPT_SUFFIXES and (directory / match).is_file():
                plan.prompts.append(Path(match).as_posix())
            else:
                plan.notes.append(f"prompt {entry}: no such file, skipped")


def _provider(data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    providers = data.get("providers", data.get("targets"))
    first = providers[0] if isinstance(providers, list) and providers else providers
    if isinstance(first, str):
        return first.strip(), {}
    if isinstance(first, dict):
        if isinstance(first.get("id"), str):
            given = first.get("config")
            config: dict[str, Any] = given if isinstance(given, dict) else {}
            return first["id"].strip(), config
        if len(first) == 1:  # {provider-id: {config: ...}}
            ((pid, options),) = first.items()
            if isinstance(options, str):  # `- exec: python answer.py`, unquoted: YAML makes it a mapping
                return f"{pid}: {options.strip()}", {}
            config = options.get("config", {}) if isinstance(options, dict) else {}
            return str(pid), config if isinstance(config, dict) else {}
    return "", {}


def llm_settings(provider: str, config: dict[str, Any]) -> dict[str, Any] | None:
    """An assay LLM setting (model, temperature, ...) for a promptfoo model provider id, or None."""
    prefix, _, rest = provider.partition(":")
    if prefix not in LLM_PREFIXES or not rest:
        return None
    head, _, tail = rest.partition(":")
    model = tail if head in API_STYLES and tail else rest
    settings: dict[str, Any] = {"model": f"{LLM_PREFIXES[prefix]}:{model}"}
    if isinstance(config.get("temperature"), int | float):
        settings["temperature"] = config["temperature"]
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens", "num_predict"):
        if isinstance(config.get(key), int) and config[key] > 0:
            settings["max_tokens"] = config[key]
            break
    for key in ("apiBaseUrl", "apiHost", "baseUrl", "base_url"):
        if isinstance(config.get(key), str):
            settings["base_url"] = config[key]
            break
    if isinstance(config.get("apiKeyEnvar"), str):
        settings["api_key_env"] = config["apiKeyEnvar"]
    return settings


def module_source(bridge: Bridge, provider: str) -> str:
    """The ``assay_provider.py`` that ``assay init`` writes for a provider run through the bridge."""
    return (
        f'"""Written by `assay init` from the promptfoo config: the runner renders the prompt as promptfoo\n'
        f'does and calls its first provider, {provider}."""\n\n'
        f"from assay.cases import promptfoo_bridge as bridge\n\n\n"
        f"def run(case, artifact_dir):\n    return bridge.{bridge.source()}\n"
    )


def _runner(provider: str, config: dict[str, Any], plan: Plan) -> None:
    prompt = plan.prompts[0] if plan.prompts else "prompts/prompt-1.txt"
    settings = llm_settings(provider, config)
    bridge = None
    if provider.startswith("exec:"):
        command = provider.removeprefix("exec:").strip()
        bridge = Bridge("exec_provider", {"prompt": prompt, "command": command, "config": config})
        plan.provider_files += [p for p in command.split() if Path(p).suffix in (".py", ".js", ".sh", ".rb")]
    elif provider.startswith(("python:", "file://")):
        ref = provider.removeprefix("python:").strip().removeprefix("file://")
        file, _, function = ref.partition(":")
        if file.endswith(".py"):
            arguments = {"prompt": prompt, "file": file, "function": function or "call_api", "config": config}
            bridge = Bridge("python_provider", arguments)
        elif file.endswith((".js", ".cjs", ".mjs")):
            bridge = Bridge("js_provider", {"prompt": prompt, "file": file, "config": config})
        if bridge:
            plan.provider_files.append(file)
    elif provider == "echo":
        bridge = Bridge("echo_provider", {"prompt": prompt})
    if bridge is not None:
        plan.bridge = bridge
        # The provider is the user's own code, as promptfoo runs it: it reaches its model's API with its key
        # (candidates are prompts, never code, so they cannot use either).
        plan.runner = {
            "type": "python",
            "function": "assay_provider:run",
            "timeout": 300,
            "network": True,
            "env_allow": list(PROVIDER_ENV_ALLOW),
        }
        # The provider's files are the harness: candidates may not change them, and the jail shows them
        # (the config names them with file://, which would otherwise hide them as the suite's own files).
        plan.forbid += [*plan.provider_files, MODULE]
        if plan.provider_files:
            plan.runner["read_only"] = list(dict.fromkeys(plan.provider_files))
        plan.next_step = "`assay eval` runs your suite through your own provider"
        return
    plan.runner = {"type": "llm", "prompt": prompt, "mode": "template"}
    if settings is not None:
        plan.runner.update(settings)
        env = settings.get("api_key_env") or {
            "openai": "OPENAI_API_KEY",
            "anthropic": "ANTHROPIC_API_KEY",
            "openrouter": "OPENROUTER_API_KEY",
        }.get(provider.split(":")[0])
        key = f"set {env}, " if env else ""
        plan.next_step = f"{key}`{install_hint('llm')}`, then `assay eval`"
    else:
        plan.runner["model"] = None
        shown = provider or "(none)"
        plan.notes.append(
            f"promptfoo's provider {shown} has no assay equivalent: set runner.model in assay.yaml"
        )
        plan.next_step = "set runner.model in assay.yaml (e.g. openai:gpt-4o-mini), then `assay eval`"
    if any(p.endswith((".json", ".yaml", ".yml")) for p in plan.prompts[:1]):
        plan.notes.append(
            "the prompt is a chat prompt (JSON/YAML messages): the llm runner sends it as one message"
        )


def _judge(data: dict[str, Any], plan: Plan) -> None:
    given = data.get("defaultTest")
    default: dict[str, Any] = given if isinstance(given, dict) else {}
    given = default.get("options")
    options: dict[str, Any] = given if isinstance(given, dict) else {}
    grader = options.get("provider")
    grader_id, grader_config = (
        (grader, {})
        if isinstance(grader, str)
        else ((grader.get("id", ""), grader.get("config") or {}) if isinstance(grader, dict) else ("", {}))
    )
    settings = llm_settings(str(grader_id), grader_config) if grader_id else None
    if settings is None and plan.runner.get("type") == "llm" and plan.runner.get("model"):
        settings = {"model": plan.runner["model"]}
    plan.judge = settings


def plan_promptfoo(directory: Path, config_file: Path) -> Plan:
    """What ``assay init`` writes for the promptfoo config ``config_file`` (in ``directory``)."""
    data = read_data(config_file)
    if not isinstance(data, dict):
        raise ConfigError(
            "expected a promptfoo config (a mapping with prompts, providers, tests)", file=config_file
        )
    plan = Plan()
    _prompts(data, directory, plan)
    if not plan.prompts:
        plan.notes.append(
            "the config has no prompt file assay can use: write one and list it in artifact.paths"
        )
        plan.prompts.append("prompts/prompt-1.txt")
        plan.new_prompts.setdefault("prompts/prompt-1.txt", "{{input}}\n")
    provider, config = _provider(data)
    plan.provider = provider
    _runner(provider, config, plan)
    _judge(data, plan)
    if len(plan.prompts) > 1:
        plan.notes.append(
            f"promptfoo runs each test with {len(plan.prompts)} prompts; assay measures one at a time: "
            f"runner prompt {plan.prompts[0]} (change it in assay.yaml to measure another)"
        )
    return plan


def config_document(plan: Plan, config_name: str, cases_file: str) -> dict[str, Any]:
    """The sections of assay.yaml for ``plan`` (artifact, cases, runner, judge)."""
    forbid = list(dict.fromkeys([config_name, cases_file, *plan.forbid]))
    document: dict[str, Any] = {
        "artifact": {"kind": "prompt", "paths": plan.prompts, "forbid": forbid},
        "cases": {"files": [cases_file]},
        "runner": plan.runner,
    }
    if plan.judge:
        document["judge"] = plan.judge
    return document


def render_config(plan: Plan, config_name: str, cases_file: str) -> str:
    """The assay.yaml text for ``plan``."""
    document = config_document(plan, config_name, cases_file)
    head = (
        f"# Written by `assay init` from {cases_file}. Reference: docs/config.md, docs/cases.md.\n"
        f"# The artifact is the config's prompts; the runner is its first provider ({plan.provider or 'none'}).\n"
    )
    body = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, default_flow_style=False)
    if not plan.judge:
        body += (
            "# Model-graded assertions (llm-rubric, factuality, ...) need a judge model, for example:\n"
            "# judge: {model: openai:gpt-4o-mini}\n"
        )
    return head + body


def write_promptfoo_starter(directory: Path, config_name: str, config_file: Path) -> tuple[Plan, list[str]]:
    """Write the prompt files, the provider module and ``config_name`` for a promptfoo project (never over an
    existing file); return the plan and the files written."""
    plan = plan_promptfoo(directory, config_file)
    written = []
    for name, text in plan.new_prompts.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        written.append(name)
    if plan.bridge is not None and not (directory / MODULE).exists():
        (directory / MODULE).write_text(module_source(plan.bridge, plan.provider), encoding="utf-8")
        written.append(MODULE)
    (directory / config_name).write_text(
        render_config(plan, config_name, config_file.relative_to(directory).as_posix()), encoding="utf-8"
    )
    written.append(config_name)
    return plan, written
