"""What a project needs before ``assay eval`` can run its cases, all at once: a judge model for checks a model
judges, the API key of the judge's provider, the ``llm`` extra, the programs the checks and the runner call.

``assay eval`` stops at the first of these it meets; a skill written for skill-creator often needs several (a
rubric judged by a model, a script check that calls ``jq``, an agent CLI), so the starter names them together.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path

from assay.checks import needs_judge
from assay.config import AgentRunnerConfig, AssayConfig, CommandRunnerConfig, LLMSettings
from assay.install import install_hint
from assay.llm.providers import PROVIDERS
from assay.model import Case
from assay.words import plural

JUDGE_EXAMPLES = "anthropic:claude-haiku-4-5, openai:gpt-4o-mini, or ollama:llama3.2 (no key)"
CLIENTS = {"openai": "openai", "anthropic": "anthropic"}  # a provider's wire API -> the package it needs


def project_needs(config: AssayConfig, cases: Sequence[Case]) -> list[str]:
    """One line per thing missing for ``cases`` to run under ``config`` (empty: nothing known to be missing)."""
    found: list[str] = []
    judged = [case.id for case in cases if any(needs_judge(spec) for spec in case.checks)]
    if judged:
        found += _judge_needs(config.judge, len(judged))
    programs = sorted(
        {
            p
            for case in cases
            for spec in case.checks
            if spec.type == "script"
            for p in _program(spec.value, config.base_dir)
        }
    )
    if programs:
        found.append(f"programs the checks call, not found on PATH: {', '.join(programs)}")
    runner = config.runner
    if isinstance(runner, AgentRunnerConfig | CommandRunnerConfig):
        missing = _program(runner.command, config.artifact_dir)
        if missing and isinstance(runner, AgentRunnerConfig):
            found.append(
                f"the agent CLI the runner calls, not found on PATH: {missing[0]} (runner.command); it also needs"
                " its key or login: name the key in runner.env_allow (ANTHROPIC_API_KEY for claude), or list"
                " its login folder in runner.read_only (~/.claude)"
            )
        elif missing:
            found.append(f"the program the runner calls, not found on PATH: {missing[0]} (runner.command)")
    return found


def _judge_needs(judge: LLMSettings | None, cases: int) -> list[str]:
    which = f"{plural(cases, 'case')} {'has' if cases == 1 else 'have'}"
    if judge is None:
        lines = [
            f"a judge model: {which} checks a model judges (a rubric, facts); set judge.model in assay.yaml"
            f" ({JUDGE_EXAMPLES})",
            "an API key for the judge's provider in the environment: ANTHROPIC_API_KEY for anthropic:,"
            " OPENAI_API_KEY for openai:, OPENROUTER_API_KEY for openrouter:",
        ]
        missing = [name for name in CLIENTS.values() if importlib.util.find_spec(name) is None]
        if missing:
            lines.append(
                f"the llm extra, for the judge ({' and '.join(missing)} not installed): {install_hint('llm')}"
            )
        return lines
    provider = PROVIDERS.get(judge.model.split(":", 1)[0])
    lines = []
    key = judge.api_key_env or (provider.key_env if provider is not None else None)
    if (
        provider is not None
        and provider.key_required
        and judge.base_url is None
        and key
        and not os.environ.get(key)
    ):
        lines.append(f"the API key of the judge ({judge.model}): {key} is not set in the environment")
    package = CLIENTS.get(provider.api) if provider is not None else "openai"
    if package is not None and importlib.util.find_spec(package) is None:
        lines.append(f"the llm extra, for the judge ({package} not installed): {install_hint('llm')}")
    return lines


def _program(command: object, base: Path) -> list[str]:
    """The program a shell command starts, when it is neither on PATH nor a file under ``base`` ([] if found)."""
    if not isinstance(command, str):
        return []
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    words = [w for w in words if "=" not in w.split("/")[0]]  # VAR=value before the program
    if not words or words[0] in ("cd", "env", "exec", "timeout", "sh", "bash"):
        return []
    program = words[0]
    if "/" in program:
        return [] if (base / program).exists() or Path(program).exists() else [program]
    return [] if shutil.which(program) else [program]
