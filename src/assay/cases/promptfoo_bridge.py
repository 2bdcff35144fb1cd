"""Run a promptfoo provider for assay's ``python`` runner: render the prompt artifact with the case's vars (as
promptfoo renders prompts) and call the provider promptfoo would call.

``assay init`` writes a small module into a promptfoo project that calls one of these (``exec:``,
``python:``/``file://*.py``, ``file://*.js`` and ``echo`` providers); ``assay eval -c promptfooconfig.yaml``
without an assay.yaml writes nothing and runs :func:`run`, which makes the same call from ``$ASSAY_PROMPTFOO_PROVIDER``
(a JSON ``{"function": ..., "arguments": {...}}``). The ``python`` runner runs it in its sandboxed worker, so
the candidate's prompt is rendered there. Each returns the output text, or raises (the runner records the
error as a failed case). ``inline``: the prompt's text, for a prompt written in the config itself.

- ``exec:CMD``: ``CMD prompt options-json context-json``, run in the project; the output is stdout,
  trimmed (stderr without stdout is an error).
- ``python:file.py`` / ``file://file.py[:fn]``: ``call_api(prompt, options, context)`` (or ``fn``)
  returning ``{"output": ...}``.
- ``file://provider.js``: a class with ``callApi(prompt, context)`` (built with ``{config}``), or an
  object or function doing the same, run in Node; returns ``{output}``.
- ``echo``: the rendered prompt itself.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.templating import render

DEFAULT_TIMEOUT_S = 300.0
_TAIL = 500


PROMPT_DELIMITER = "---"
PROVIDER_ENV = "ASSAY_PROMPTFOO_PROVIDER"


def prompt_text(path: Path) -> str:
    """A prompt file's text as promptfoo reads it: a text file is trimmed, and of several prompts split by
    ``---`` lines the first is taken; JSON and YAML chat prompts are kept as written."""
    return first_prompt(path.read_text(encoding="utf-8"), path.suffix)


def first_prompt(text: str, suffix: str = ".txt") -> str:
    """The prompt of a prompt file's ``text`` (see :func:`prompt_text`); ``suffix`` tells its kind."""
    if suffix.lower() in (".json", ".yaml", ".yml", ".jsonl"):
        return text
    chunks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip() == PROMPT_DELIMITER:
            chunks.append([])
        else:
            chunks[-1].append(line)
    return next((joined for chunk in chunks if (joined := "\n".join(chunk).strip())), "")


def render_prompt(
    artifact_dir: Path | str, prompt: str, variables: dict[str, Any], inline: str | None = None
) -> str:
    """The prompt file ``prompt`` (relative to ``artifact_dir``), or the ``inline`` prompt text, rendered
    with ``variables``."""
    text = first_prompt(inline) if inline is not None else prompt_text(Path(artifact_dir) / prompt)
    return render(text, variables)


class PromptedText(str):
    """The output text, carrying the rendered prompt it answers (``context.prompt`` for checks)."""

    prompt: str

    def __new__(cls, text: str, prompt: str) -> PromptedText:
        made = super().__new__(cls, text)
        made.prompt = prompt
        return made


def _context(case: Any, rendered: str) -> dict[str, Any]:
    return {"vars": dict(case.vars), "prompt": {"raw": rendered, "label": rendered}}


def _text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False)


def _response(result: Any, who: str) -> str:
    if isinstance(result, dict):
        if result.get("error"):
            raise RuntimeError(f"{who}: {result['error']}")
        if "output" in result:
            return _text(result["output"])
    raise RuntimeError(f"{who} returned {type(result).__name__}; expected {{'output': ...}}")


def exec_provider(
    case: Any,
    artifact_dir: Path | str,
    *,
    prompt: str,
    command: str,
    config: dict[str, Any] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    inline: str | None = None,
) -> str:
    """promptfoo's ``exec:`` provider (see the module docstring)."""
    rendered = render_prompt(artifact_dir, prompt, case.vars, inline)
    argv = [
        *shlex.split(command),
        rendered,
        json.dumps({"config": config or {}}),
        json.dumps(_context(case, rendered)),
    ]
    proc = subprocess.run(
        argv, cwd=artifact_dir, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    stdout, stderr = proc.stdout.strip(), proc.stderr.strip()
    if proc.returncode != 0:
        raise RuntimeError(f"{command}: exit {proc.returncode}: {stderr[-_TAIL:]}")
    if stderr and not stdout:
        raise RuntimeError(f"{command}: {stderr[-_TAIL:]}")
    return PromptedText(stdout, rendered)


def python_provider(
    case: Any,
    artifact_dir: Path | str,
    *,
    prompt: str,
    file: str,
    function: str = "call_api",
    config: dict[str, Any] | None = None,
    inline: str | None = None,
) -> str:
    """promptfoo's Python provider: ``function(prompt, options, context)`` of ``file``."""
    rendered = render_prompt(artifact_dir, prompt, case.vars, inline)
    path = Path(artifact_dir) / file
    spec = importlib.util.spec_from_file_location(f"assay_provider_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {file} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.dont_write_bytecode = (
        True  # no __pycache__ in the user's folder (each case's worker loads the file afresh)
    )
    spec.loader.exec_module(module)
    fn = getattr(module, function, None)
    if not callable(fn):
        raise RuntimeError(f"{file} has no function {function!r}")
    answer = _response(fn(rendered, {"config": config or {}}, _context(case, rendered)), f"{file}:{function}")
    return PromptedText(answer, rendered)


def js_provider(
    case: Any,
    artifact_dir: Path | str,
    *,
    prompt: str,
    file: str,
    config: dict[str, Any] | None = None,
    inline: str | None = None,
) -> str:
    """promptfoo's JavaScript provider (a class or object with ``callApi``), in Node."""
    from assay.checks.node import JsCall, call_js_sync

    rendered = render_prompt(artifact_dir, prompt, case.vars, inline)
    code = (
        "const mod = process.mainModule.require(file);\n"
        "const Provider = mod && mod.default ? mod.default : mod;\n"
        "const provider = typeof Provider === 'function' && Provider.prototype && Provider.prototype.callApi\n"
        "  ? new Provider({ config }) : Provider;\n"
        "if (typeof provider === 'function') return await provider(prompt, context);\n"
        "return await provider.callApi(prompt, context);"
    )
    call = JsCall(
        args=[str((Path(artifact_dir) / file).resolve()), config or {}, rendered, _context(case, rendered)],
        code=code,
        params=("file", "config", "prompt", "context"),
    )
    call.code = f"return (async () => {{\n{code}\n}})();"
    answer = _response(call_js_sync(call, cwd=Path(artifact_dir), timeout_s=DEFAULT_TIMEOUT_S), file)
    return PromptedText(answer, rendered)


def echo_provider(case: Any, artifact_dir: Path | str, *, prompt: str, inline: str | None = None) -> str:
    """promptfoo's ``echo`` provider: the rendered prompt is the output."""
    rendered = render_prompt(artifact_dir, prompt, case.vars, inline)
    return PromptedText(rendered, rendered)


PROVIDERS: dict[str, Callable[..., str]] = {
    "exec_provider": exec_provider,
    "python_provider": python_provider,
    "js_provider": js_provider,
    "echo_provider": echo_provider,
}


def run(case: Any, artifact_dir: Path | str) -> str:
    """The provider call that ``$ASSAY_PROMPTFOO_PROVIDER`` describes (the ``python`` runner's function when
    ``assay eval`` runs a promptfoo config as it is)."""
    try:
        call = json.loads(os.environ[PROVIDER_ENV])
        provider = PROVIDERS[call["function"]]
        arguments = dict(call["arguments"])
    except (KeyError, TypeError, ValueError) as exc:
        raise RuntimeError(f"${PROVIDER_ENV} does not name a promptfoo provider call: {exc}") from None
    return provider(case, artifact_dir, **arguments)


def command_line(command: str) -> list[str]:
    """The argv of an ``exec:`` command (for checks by ``assay init``)."""
    return shlex.split(command)
