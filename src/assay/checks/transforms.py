"""Output transforms (promptfoo's ``transform`` on an assertion and ``options.transform`` on a test): code that
rewrites the output before a check judges it.

A transform is inline JavaScript (an expression, or a function body that returns, with ``output`` and
``context`` in scope), or ``file://path.js[:function]`` / ``file://path.py[:function]`` (Python's default
function is ``get_transform``). Each gets the output so far and ``context`` (``vars``, ``prompt``). What it
returns becomes the output: text checks see a non-string value as JSON, and ``python`` / ``javascript``
checks receive the value itself (as promptfoo passes it).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path
from typing import Any

from assay.checks.base import CheckContext
from assay.checks.node import JsCall, call_js, split_file_ref
from assay.model import Output

TRANSFORMED = "transformed"  # Output.meta key holding the transformed value (any JSON value)


def output_value(output: Output) -> Any:
    """The output as a check should receive it: the transformed value when there is one, else the text."""
    return output.meta.get(TRANSFORMED, output.text)


def as_text(value: Any) -> str:
    """A transformed value as text: strings as they are, anything else as compact JSON (``JSON.stringify``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def transform_context(output: Output, ctx: CheckContext) -> dict[str, Any]:
    prompt = output.meta.get("prompt")
    return {
        "vars": dict(ctx.case.vars),
        "prompt": {"raw": prompt, "label": prompt},
        "metadata": output.meta.get("metadata", {}),
    }


async def run_python_file(path: Path, function: str, args: list[Any]) -> Any:
    """Call ``function`` of the Python file ``path`` (imported once, in-process) with ``args``."""
    from assay.checks.programs import import_file_function

    fn = import_file_function(path, function)
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    value = await asyncio.to_thread(fn, *args)
    return await value if inspect.isawaitable(value) else value


async def apply_transform(code: str, value: Any, context: dict[str, Any], cwd: Path | None) -> Any:
    """One transform applied to ``value``."""
    if code.startswith("file://"):
        file, function = split_file_ref(code)
        if file.endswith(".py"):
            return await run_python_file(Path(file), function or "get_transform", [value, context])
        return await call_js(JsCall(args=[value, context], file=file, function=function), cwd=cwd)
    return await call_js(JsCall(args=[value, context], code=code), cwd=cwd)


async def transform_output(output: Output, transforms: list[str], ctx: CheckContext) -> Output:
    """``output`` rewritten by each transform in turn."""
    value = output_value(output)
    context = transform_context(output, ctx)
    for code in transforms:
        value = await apply_transform(code, value, context, ctx.project_dir)
    meta = {**output.meta, TRANSFORMED: value}
    return output.model_copy(update={"text": as_text(value), "meta": meta})
