"""Checks that run the user's own evaluator: ``script`` (a sandboxed shell command) and ``python`` (a trusted
callable run in-process)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import re
import sys
import tempfile
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError
from assay.checks.grading import PassRule, read_verdict
from assay.checks.text import clip
from assay.checks.transforms import output_value
from assay.model import CheckResult, CheckSpec, Output
from assay.sandbox import SandboxLimits, decode_output, run_process, scrubbed_env

DEFAULT_SCRIPT_LIMITS = SandboxLimits(timeout_s=30)
DEFAULT_PYTHON_TIMEOUT_S = 60.0
TAIL_CHARS = 160
MODULE_REF = re.compile(r"\A([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*)\Z")
FILE_REF = re.compile(r"\A(?:file://(?P<any>.+?\.py)|(?P<plain>[\w./~\\-]+\.py))(?::(?P<fn>[A-Za-z_]\w*))?\Z")

_modules: dict[str, ModuleType] = {}
_import_lock = threading.Lock()


def _tail(text: str, limit: int = TAIL_CHARS) -> str:
    text = text.strip().replace("\n", " | ")
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def _timeout_option(spec: CheckSpec, default: float | None) -> float | None:
    timeout = spec.options.get("timeout_s", default)
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise CheckSpecError(f"{spec.type}: option timeout_s must be a positive number of seconds")
    return float(timeout) if timeout is not None else None


def _unit_score(line: str) -> float | None:
    try:
        value = float(line)
    except ValueError:
        return None
    return value if 0.0 <= value <= 1.0 else None


@CHECKS.register("script")
class ScriptCheck(Check):
    """Runs ``value`` as a shell command in the working directory, with the output on stdin and its path in
    ``ASSAY_OUTPUT_FILE``. Exit code 0 passes; a last stdout line holding a number in [0, 1] is the score.
    Also set: ``ASSAY_CASE_ID``, ``ASSAY_EXPECTED`` (when the case has one) and ``ASSAY_VARS`` (JSON).
    Option ``timeout_s`` overrides the time limit."""

    name = "script"
    prose = True

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        if not isinstance(spec.value, str) or not spec.value.strip():
            raise CheckSpecError("script: value is required: the shell command to run")
        self.timeout_s = _timeout_option(spec, None)

    def limits(self, ctx: CheckContext) -> SandboxLimits:
        limits = ctx.limits or DEFAULT_SCRIPT_LIMITS
        if self.timeout_s is not None:
            limits = dataclasses.replace(limits, timeout_s=self.timeout_s)
        return limits

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        limits = self.limits(ctx)
        cwd = ctx.workdir or ctx.project_dir
        fd, name = tempfile.mkstemp(prefix="assay-output-", suffix=".txt")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(output.text)
            extra = {
                "ASSAY_OUTPUT_FILE": name,
                "ASSAY_CASE_ID": ctx.case.id,
                "ASSAY_VARS": json.dumps(ctx.case.vars, default=str),
            }
            if ctx.case.expected is not None:
                extra["ASSAY_EXPECTED"] = ctx.case.expected
            # stdin comes from the file, not a pipe: a script that never reads a large output would
            # otherwise block the pipe write, which run_process does before its timeout starts.
            proc = await run_process(
                f'exec <"$ASSAY_OUTPUT_FILE"\n{self.spec.value}',
                cwd=cwd,
                limits=limits,
                env=scrubbed_env(limits.env_allow, extra),
            )
        finally:
            with contextlib.suppress(OSError):
                os.unlink(name)
        stdout, _ = decode_output(proc.stdout)
        stderr, _ = decode_output(proc.stderr)
        passed = proc.error is None and proc.exit_code == 0
        lines = [line.strip() for line in stdout.splitlines() if line.strip()]
        score = _unit_score(lines[-1]) if lines and proc.error is None else None
        parts = [proc.error or f"exit {proc.exit_code}"]
        if score is not None:
            parts.append(f"score {score:g}")
        if stderr.strip():
            parts.append(f"stderr: {_tail(stderr)}")
        elif not passed and stdout.strip():
            parts.append(f"stdout: {_tail(stdout)}")
        return self.result(passed, score, clip("; ".join(parts)))


@contextlib.contextmanager
def _on_sys_path(directory: Path | None) -> Iterator[None]:
    """Make ``directory`` importable while a user module loads (so it can import its siblings)."""
    entry = str(directory) if directory is not None else None
    added = entry is not None and entry not in sys.path
    if added:
        sys.path.insert(0, entry)  # type: ignore[arg-type]
    try:
        yield
    finally:
        if added:
            with contextlib.suppress(ValueError):
                sys.path.remove(entry)  # type: ignore[arg-type]


@contextlib.contextmanager
def _no_bytecode() -> Iterator[None]:
    """Import without writing ``__pycache__`` beside the check: a compiled check in the work directory would be
    a file the candidates' jail did not mask (it appears after the jail is set up)."""
    before, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        yield
    finally:
        sys.dont_write_bytecode = before


def _import_file(path: Path) -> ModuleType:
    key = f"file:{path}"
    with _import_lock:
        if key in _modules:
            return _modules[key]
        if not path.is_file():
            raise CheckSpecError(f"python: file {str(path)!r} does not exist")
        name = "assay_user_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise CheckSpecError(f"python: cannot load {str(path)!r} as a Python module")
        module = importlib.util.module_from_spec(spec)
        try:
            with _on_sys_path(path.parent), _no_bytecode():
                spec.loader.exec_module(module)
        except Exception as exc:
            raise CheckSpecError(
                f"python: importing {str(path)!r} failed: {type(exc).__name__}: {exc}"
            ) from None
        _modules[key] = module
        return module


def import_file_function(path: Path, function: str) -> Callable[..., Any]:
    """``function`` of the Python file ``path`` (imported once per process); CheckSpecError otherwise."""
    return _attribute(_import_file(path.resolve()), function, repr(str(path)))


def _import_module(name: str, project_dir: Path | None) -> ModuleType:
    with _import_lock:
        if name in _modules:
            return _modules[name]
        try:
            with _on_sys_path(project_dir), _no_bytecode():
                module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            raise CheckSpecError(f"python: cannot import module {name!r}: {exc}") from None
        except Exception as exc:
            raise CheckSpecError(f"python: importing {name!r} failed: {type(exc).__name__}: {exc}") from None
        _modules[name] = module
        return module


def _attribute(module: ModuleType, function: str, where: str) -> Callable[..., Any]:
    fn = getattr(module, function, None)
    if not callable(fn):
        raise CheckSpecError(f"python: {where} has no function {function!r}")
    return cast("Callable[..., Any]", fn)


async def _call(fn: Callable[..., Any], text: Any, context: dict[str, Any]) -> Any:
    """Await an async evaluator; run a plain one in a worker thread so it does not stall other cases."""
    if inspect.iscoroutinefunction(fn):
        return await fn(text, context)
    value = await asyncio.to_thread(fn, text, context)
    return await value if inspect.isawaitable(value) else value


def _compile_inline(code: str) -> Callable[[str, dict[str, Any]], Any]:
    """An inline expression, or a multi-line body that uses ``return``, as a function of (output, context)."""
    namespace: dict[str, Any] = {"json": json}
    if "\n" not in code.strip():
        with contextlib.suppress(SyntaxError):
            expression = compile(code.strip(), "<python check>", "eval")
            return lambda output, context: eval(
                expression, {"json": json, "output": output, "context": context}
            )
    try:
        source = "def _assay_check(output, context):\n" + textwrap.indent(textwrap.dedent(code), "    ")
        exec(compile(source, "<python check>", "exec"), namespace)
    except SyntaxError as exc:
        line = f" (line {exc.lineno - 1})" if exc.lineno and exc.lineno > 1 else ""
        raise CheckSpecError(f"python: syntax error in inline code{line}: {exc.msg}") from None
    return cast("Callable[[str, dict[str, Any]], Any]", namespace["_assay_check"])


RESERVED_OPTIONS = frozenset(("timeout_s", "transform", "pass_rule", "threshold", "config"))


@CHECKS.register("python")
class PythonCheck(Check):
    """Calls a trusted evaluator as ``fn(output, context)``. ``value`` is ``module:function``,
    ``path/file.py:function`` (relative to the project directory), ``file://path.py`` (function
    ``get_assert``) or inline code with ``output``, ``context`` and ``json`` in scope (one expression, or a
    body that uses ``return``). The function may be async; what it may return is in
    :mod:`assay.checks.grading` (option ``pass_rule``). ``context`` holds promptfoo's keys — ``vars``,
    ``prompt``, ``test`` (``vars``, ``description``), ``config``, ``provider``, ``providerResponse``,
    ``logProbs`` — and assay's ``expected``, ``case_id``, ``input``, ``tags``, ``workdir``,
    ``project_dir`` and ``output`` (the runner's record without its text). ``config`` is the option
    ``config``, else the other options. Option ``timeout_s`` (default 60) bounds the call."""

    name = "python"
    prose = True

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        code = spec.value
        if not isinstance(code, str) or not code.strip():
            raise CheckSpecError(
                "python: value is required: module:function, file.py:function or inline code"
            )
        self._fn: Callable[..., Any] | None = None
        self._module: str | None = None
        self._file: Path | None = None
        self._function = "get_assert"
        self.timeout_s = _timeout_option(spec, DEFAULT_PYTHON_TIMEOUT_S)
        self.rule = PassRule.of(spec)
        module_ref = MODULE_REF.match(code.strip())
        file_ref = FILE_REF.match(code.strip()) if "\n" not in code.strip() else None
        if file_ref:
            self._file = Path(file_ref.group("any") or file_ref.group("plain")).expanduser()
            self._function = file_ref.group("fn") or "get_assert"
            if self._file.is_absolute():
                self.resolve(None)
        elif module_ref:
            self._module, self._function = module_ref.groups()
            if importlib.util.find_spec(self._module.split(".")[0]) is not None:
                self.resolve(None)  # importable now: a broken module fails at load
        else:
            self._fn = _compile_inline(code)

    def prepare(self, project_dir: Path | None) -> None:
        self.resolve(project_dir)

    def resolve(self, project_dir: Path | None) -> Callable[..., Any]:
        """The evaluator function, importing its module once (relative to ``project_dir``); CheckSpecError."""
        if self._fn is None:
            if self._file is not None:
                path = self._file if self._file.is_absolute() else (project_dir or Path.cwd()) / self._file
                self._fn = _attribute(_import_file(path.resolve()), self._function, repr(str(self._file)))
            else:
                assert self._module is not None
                module = _import_module(self._module, project_dir)
                self._fn = _attribute(module, self._function, f"module {self._module!r}")
        return self._fn

    def context(self, output: Output, ctx: CheckContext) -> dict[str, Any]:
        return evaluator_context(self.spec, output, ctx)

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        try:
            fn = self.resolve(ctx.project_dir)
        except CheckSpecError as exc:
            return self.result(False, evidence=str(exc))
        context = self.context(output, ctx)
        try:
            value = await asyncio.wait_for(_call(fn, output_value(output), context), self.timeout_s)
        except TimeoutError:
            return self.result(False, evidence=f"python evaluator timed out after {self.timeout_s:g}s")
        except Exception as exc:
            return self.result(False, evidence=clip(f"python evaluator raised {type(exc).__name__}: {exc}"))
        return self.interpret(value)

    def interpret(self, value: Any) -> CheckResult:
        """Turn the evaluator's return value into a result (a bad return value is a failed result)."""
        verdict = read_verdict(value, self.rule, "python evaluator")
        return self.result(verdict.passed, verdict.score, verdict.evidence)


def evaluator_context(spec: CheckSpec, output: Output, ctx: CheckContext) -> dict[str, Any]:
    """The ``context`` a ``python`` or ``javascript`` evaluator receives (see :class:`PythonCheck`)."""
    case = ctx.case
    workdir = ctx.workdir or (Path(output.workdir) if output.workdir else None)
    options = spec.options
    config = (
        options["config"]
        if "config" in options
        else {k: v for k, v in options.items() if k not in RESERVED_OPTIONS}
    )
    prompt = output.meta.get("prompt")
    provider = output.meta.get("provider") or output.meta.get("model")
    return {
        "prompt": prompt if isinstance(prompt, str) else case.prompt_text(),
        "vars": dict(case.vars),
        "test": {"vars": dict(case.vars), "description": case.description, "metadata": {}},
        "config": dict(config) if isinstance(config, dict) else config,
        "provider": {"id": provider, "label": provider} if provider else None,
        "providerResponse": {
            "output": output_value(output),
            "cost": output.cost_usd,
            "tokenUsage": {
                "prompt": output.tokens_in,
                "completion": output.tokens_out,
                "total": output.tokens_in + output.tokens_out,
            },
        },
        "logProbs": None,
        "expected": case.expected,
        "case_id": case.id,
        "input": case.prompt_text(),
        "tags": list(case.tags),
        "workdir": str(workdir) if workdir else None,
        "project_dir": str(ctx.project_dir) if ctx.project_dir else None,
        "output": output.model_dump(mode="json", exclude={"text"}),
    }
