"""``javascript``: a promptfoo-style JavaScript assertion, run in Node (``node`` on PATH).

``value`` is inline code — one line is an expression whose value is returned (a line starting with
``const``/``let``/``var`` returns its last statement), several lines are a function body that returns —
with ``output`` and ``context`` in scope, or ``file://path.js[:function]`` (an absolute path, or one
relative to the project directory) exporting ``function(output, context)``. ``context`` is the one a
``python`` check gets (``vars``, ``prompt``, ``test``, ``config``, ...). The return value is read by
:mod:`assay.checks.grading` (checks loaded from promptfoo use promptfoo's rule). Option ``timeout_s``
(default 30).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError, CheckUnavailable
from assay.checks.grading import PassRule, read_verdict
from assay.checks.node import (
    DEFAULT_TIMEOUT_S,
    NO_NODE,
    JsCall,
    NodeError,
    call_js,
    node_binary,
    split_file_ref,
)
from assay.checks.programs import _timeout_option, evaluator_context
from assay.checks.text import clip
from assay.checks.transforms import output_value
from assay.model import CheckResult, CheckSpec, Output

JS_SUFFIXES = (".js", ".cjs", ".mjs")


@CHECKS.register("javascript")
class JavascriptCheck(Check):
    """A JavaScript assertion run in Node (see the module docstring)."""

    name = "javascript"
    prose = True

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        code = spec.value
        if not isinstance(code, str) or not code.strip():
            raise CheckSpecError("javascript: value is required: inline code or file://path.js")
        self.timeout_s = _timeout_option(spec, DEFAULT_TIMEOUT_S) or DEFAULT_TIMEOUT_S
        self.rule = PassRule.of(spec, threshold_on_dict=False)
        self.file: str | None = None
        self.function: str | None = None
        self.code: str | None = None
        if code.strip().startswith("file://"):
            self.file, self.function = split_file_ref(code.strip())
            if not self.file.endswith(JS_SUFFIXES):
                raise CheckSpecError(
                    f"javascript: {code.strip()!r} is not a JavaScript file (.js, .cjs, .mjs)"
                )
        else:
            self.code = code.rstrip()

    def _file(self, project_dir: Path | None) -> str | None:
        if self.file is None:
            return None
        path = Path(self.file)
        return str(path if path.is_absolute() else (project_dir or Path.cwd()) / path)

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        if node_binary() is None:
            raise CheckUnavailable(NO_NODE)
        context = evaluator_context(self.spec, output, ctx)
        args: list[Any] = [output_value(output), context]
        call = JsCall(args=args, code=self.code, file=self._file(ctx.project_dir), function=self.function)
        call.kind = "assert"
        try:
            value = await call_js(call, cwd=ctx.project_dir, timeout_s=self.timeout_s)
        except NodeError as exc:
            return self.result(False, evidence=clip(f"javascript: {exc}"))
        verdict = read_verdict(value, self.rule, "javascript")
        return self.result(verdict.passed, verdict.score, verdict.evidence)
