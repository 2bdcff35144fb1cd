"""Checks on how the response came back rather than on its text alone: ``finish_reason``,
``tool_call_valid`` and ``webhook``.

- ``finish_reason``: the runner reported this finish reason (``stop``, ``length``, ...) in
  ``Output.meta["finish_reason"]``; a runner that reports none makes the check fail saying so.
- ``tool_call_valid``: the output is one tool call or a list of them (OpenAI's ``{"type": "function",
  "function": {"name", "arguments"}}``, a bare ``{"name", "arguments"}``, or ``{"tool_calls": [...]}``),
  and each names a tool of ``value`` (OpenAI ``tools`` or ``functions``) with arguments that validate
  against that tool's parameter schema.
- ``webhook``: POSTs ``{"output": ..., "context": {"vars": ...}}`` as JSON to the URL in ``value`` and
  reads ``{"pass": bool, "score": number, "reason": text}`` back (option ``timeout_s``, default 30).
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError, CheckUnavailable
from assay.checks.grading import PassRule, read_verdict
from assay.checks.structured import parse_json_output, schema_validator
from assay.checks.text import clip, scalar_text
from assay.model import CheckResult, CheckSpec, Output


@CHECKS.register("finish_reason")
class FinishReasonCheck(Check):
    """The runner's reported finish reason equals ``value`` (case-insensitive)."""

    name = "finish_reason"

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.expected = (scalar_text(spec) or "").strip().lower()

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        reason = output.meta.get("finish_reason")
        if not isinstance(reason, str):
            raise CheckUnavailable("finish_reason: the runner reported no finish reason for this output")
        ok = reason.strip().lower() == self.expected
        return self.result(ok, evidence=f"finish reason {reason!r}, expected {self.expected!r}")


def _tools(value: Any) -> dict[str, Any]:
    """Tool name -> parameter schema, from OpenAI ``tools`` or ``functions``."""
    items = value.get("tools", value.get("functions")) if isinstance(value, dict) else value
    if not isinstance(items, list) or not items:
        raise CheckSpecError("tool_call_valid: value must list the tools (OpenAI tools or functions)")
    out: dict[str, Any] = {}
    for item in items:
        spec = item.get("function", item) if isinstance(item, dict) else None
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise CheckSpecError("tool_call_valid: every tool needs a name (and parameters)")
        out[spec["name"]] = spec.get("parameters") or {"type": "object"}
    return out


def _calls(value: Any) -> list[dict[str, Any]] | None:
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        value = value["tool_calls"]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not value:
        return None
    calls = []
    for item in value:
        call = item.get("function", item) if isinstance(item, dict) else None
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            return None
        calls.append(call)
    return calls


@CHECKS.register("tool_call_valid")
class ToolCallValidCheck(Check):
    """Every tool call in the output names a known tool with valid arguments (see the module docstring)."""

    name = "tool_call_valid"

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.tools = _tools(spec.value)

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        value, error = parse_json_output(output.text)
        calls = None if error else _calls(value)
        if calls is None:
            return self.result(
                False, evidence=error or "the output is not a tool call or a list of tool calls"
            )
        for call in calls:
            schema = self.tools.get(call["name"])
            if schema is None:
                return self.result(
                    False, evidence=f"unknown tool {call['name']!r}; known: {', '.join(self.tools)}"
                )
            arguments = call.get("arguments", {})
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments or "{}")
                except ValueError as exc:
                    return self.result(False, evidence=f"{call['name']}: arguments are not JSON: {exc}")
            errors = list(schema_validator(schema).iter_errors(arguments))
            if errors:
                return self.result(False, evidence=clip(f"{call['name']}: {errors[0].message}"))
        return self.result(True, evidence=f"{len(calls)} valid tool call(s)")


@CHECKS.register("webhook")
class WebhookCheck(Check):
    """Asks a web service for the verdict (see the module docstring)."""

    name = "webhook"

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.url = scalar_text(spec) or ""
        if not self.url.startswith(("http://", "https://")):
            raise CheckSpecError("webhook: value must be an http(s) URL")
        timeout = spec.options.get("timeout_s", 30)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise CheckSpecError("webhook: option timeout_s must be a positive number of seconds")
        self.timeout_s = float(timeout)

    def _post(self, body: bytes) -> Any:
        request = urllib.request.Request(self.url, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
            return json.loads(response.read(1_000_000) or b"null")

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        body = json.dumps({"output": output.text, "context": {"vars": ctx.case.vars}}, default=str).encode()
        try:
            answer = await asyncio.to_thread(self._post, body)
        except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
            return self.result(False, evidence=clip(f"webhook {self.url}: {exc}"))
        if isinstance(answer, dict) and "score" not in answer and isinstance(answer.get("pass"), bool):
            answer = {**answer, "score": 1.0 if answer["pass"] else 0.0}
        verdict = read_verdict(answer, PassRule(), "webhook")
        return self.result(verdict.passed, verdict.score, verdict.evidence)
