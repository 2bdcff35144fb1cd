"""The ``command`` runner: a shell template filled with shell-quoted case values, run in the workdir.

Placeholders are ``{input}`` (the case's prompt text) and ``{vars.NAME}`` (``{vars.a.b}`` reaches into
nested mappings). Every value is inserted with :func:`shlex.quote`, so a case can never inject shell;
for the same reason a placeholder inside quotes (``"{input}"``) or after a here-document (``<<``) is
refused when the template is loaded.
``${NAME}`` stays a shell variable, ``{{input}}`` is the literal text ``{input}``, and braces that do not
hold a name (``awk '{print $1}'``, ``{a,b}``, ``find -exec rm {} ;``) are left alone.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.config import AgentRunnerConfig, CommandRunnerConfig
from assay.model import Case, Output
from assay.runners.base import RUNNERS, RunContext, Runner
from assay.sandbox import (
    ProcessResult,
    SandboxLimits,
    decode_output,
    describe_exit,
    run_process,
    scrubbed_env,
)
from assay.sandbox.jail import Jail
from assay.sandbox.survey import unshown_path
from assay.sandbox.workers import JailWorkers

TAIL_CHARS = 2048
REFUSAL = (
    "the jail does not show {path} to candidates; declare what the runner reads in runner.read_only "
    "(docs/evolve.md)"
)

_NAME = r"[A-Za-z_][\w-]*(?:\.[^{}\s.]*)*"
# A placeholder is a dotted name in braces, not preceded by "$" (shell ${VAR}); {{name}} is an escape.
_TOKEN = re.compile(rf"\{{\{{({_NAME})\}}\}}|(?<!\$)\{{({_NAME})\}}")
# What is left of a placeholder whose closing brace is missing (``{input``, ``{vars.city``).
_UNCLOSED = re.compile(r"(?<!\$)\{(input(?![\w-])|vars(?![\w-])[^\s{}]*)")


class TemplateError(ValueError):
    """A command template names a placeholder that can never be filled (``{inptu}``, ``{vars.}``)."""


class MissingValue(LookupError):
    """A case lacks a value the template asks for (``{vars.city}`` on a case without ``city``)."""


@dataclass(frozen=True)
class _Slot:
    path: tuple[str, ...]  # () for {input}, ("a", "b") for {vars.a.b}

    @property
    def label(self) -> str:
        return "{" + ".".join(("vars", *self.path)) + "}" if self.path else "{input}"


class CommandTemplate:
    """A parsed shell template. Construction validates it; :meth:`render` fills it for one case."""

    def __init__(self, template: str) -> None:
        if not template.strip():
            raise TemplateError("command template is empty")
        self.template = template
        self._parts: list[str | _Slot] = []
        pos = 0
        for match in _TOKEN.finditer(template):
            self._parts.append(_closed(template[pos : match.start()]))
            escaped, name = match.groups()
            self._parts.append("{" + escaped + "}" if escaped else self._slot(name))
            pos = match.end()
        self._parts.append(_closed(template[pos:]))
        self._check_contexts()

    def _check_contexts(self) -> None:
        """Refuse placeholders the shell would not treat as plain words: a quoted value inside quotes or
        a here-document is open to ``$(...)`` again."""
        state: str | None = None
        heredoc = False
        for part in self._parts:
            if isinstance(part, str):
                state, opened = _shell_state(part, state)
                heredoc = heredoc or opened
            elif state is not None:
                where = "single" if "'" in state else "double"
                raise TemplateError(
                    f"placeholder {part.label} is inside {where} quotes; remove the quotes: every value is "
                    f"shell-quoted already (write e.g. `cmd -p {part.label}`)"
                )
            elif heredoc:
                raise TemplateError(
                    f"placeholder {part.label} follows a here-document (<<), where quoting does not protect it; "
                    "use `stdin: true` to pass the input on standard input"
                )

    @staticmethod
    def _slot(name: str) -> _Slot:
        head, _, rest = name.partition(".")
        if name == "input":
            return _Slot(())
        if head == "vars":
            keys = tuple(rest.split(".")) if rest else ()
            if keys and all(keys):
                return _Slot(keys)
            raise TemplateError(f"malformed placeholder {{{name}}}: expected {{vars.NAME}}")
        raise TemplateError(
            f"unknown placeholder {{{name}}}: use {{input}} or {{vars.NAME}} (write {{{{{name}}}}} for the literal text)"
        )

    @property
    def placeholders(self) -> list[str]:
        """The placeholders the template uses, in order (``{input}``, ``{vars.city}``)."""
        return [p.label for p in self._parts if isinstance(p, _Slot)]

    def render(self, case: Case) -> str:
        """The command for ``case``, every value shell-quoted. Raises MissingValue for an absent var."""
        out: list[str] = []
        for part in self._parts:
            out.append(part if isinstance(part, str) else shlex.quote(_value(case, part)))
        return "".join(out)


def _closed(text: str) -> str:
    """``text`` (template text between placeholders), refused if it holds a placeholder missing its ``}``."""
    unclosed = _UNCLOSED.search(text)
    if unclosed is not None:
        raise TemplateError(
            f"unclosed placeholder {unclosed.group(0)!r}: add the closing brace ({{{unclosed.group(1)}}})"
        )
    return text


def _shell_state(text: str, state: str | None) -> tuple[str | None, bool]:
    """Follow shell quoting through ``text``: the quote still open at its end (``'``, ``$'`` or ``"``,
    None outside quotes) and whether an unquoted here-document operator (``<<``, not ``<<<``) appeared."""
    heredoc = False
    i = 0
    while i < len(text):
        char = text[i]
        if state == "'":
            state = None if char == "'" else state
        elif state in ('"', "$'"):
            if char == "\\":
                i += 1
            elif char == state[-1]:
                state = None
        elif char == "\\":
            i += 1
        elif char == "'":
            state = "$'" if text[i - 1 : i] == "$" else "'"
        elif char == '"':
            state = '"'
        elif text.startswith("<<", i):
            heredoc = heredoc or not text.startswith("<<<", i)
            i += 2 if text.startswith("<<<", i) else 1
        i += 1
    return state, heredoc


def _value(case: Case, slot: _Slot) -> str:
    if not slot.path:
        return case.prompt_text()
    current: Any = case.vars
    for key in slot.path:
        if not isinstance(current, Mapping) or key not in current:
            raise MissingValue(f"case {case.id!r} has no value for {slot.label}")
        current = current[key]
    if isinstance(current, str):
        return current
    return json.dumps(current, ensure_ascii=False, default=str)


def decode_capped(data: bytes, truncated: bool) -> tuple[str, bool]:
    """Decode output like :func:`assay.sandbox.decode_output`, but a UTF-8 character cut in two by the
    output cap is dropped instead of making the whole output look binary."""
    if truncated:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.reason == "unexpected end of data" and exc.end == len(data):
                data = data[: exc.start]
    return decode_output(data)


def strip_newline(text: str) -> str:
    """Remove one trailing newline (``\\n`` or ``\\r\\n``), as shells do for ``$(...)``."""
    if text.endswith("\r\n"):
        return text[:-2]
    return text.removesuffix("\n")


def output_from_process(result: ProcessResult, workdir: Path) -> Output:
    """Turn a sandboxed process result into an Output; a non-zero exit becomes ``error="exit code N"``."""
    stdout, binary = decode_capped(result.stdout, result.truncated)
    stderr, _ = decode_output(result.stderr)
    error = result.error
    if error is None and result.exit_code not in (0, None):
        error = describe_exit(result.exit_code)
    return Output(
        text=strip_newline(stdout),
        stdout_tail=stdout[-TAIL_CHARS:],
        stderr_tail=stderr[-TAIL_CHARS:],
        exit_code=result.exit_code,
        error=error,
        timed_out=result.timed_out,
        truncated=result.truncated,
        binary=binary,
        duration_s=result.duration_s,
        cpu_s=result.cpu_s,
        workdir=str(workdir),
    )


def note_refusal(output: Output, jail: Jail | None, workdir: Path) -> None:
    """When a jailed case failed on a project path its jail does not show (its error or stderr names it),
    say so in its error: one line, the case's evidence."""
    if jail is None or output.error is None:
        return
    path = unshown_path(f"{output.error}\n{output.stderr_tail}", workdir, jail)
    if path is not None:
        output.error = f"{output.error}; {REFUSAL.format(path=path)}"


@RUNNERS.register("command")
class CommandRunner(Runner):
    """Runs ``config.command`` through the shell in the workdir for each case (see the module docstring).

    With ``stdin: true`` the case's prompt text goes to standard input too. ``env`` is added to the
    allow-listed environment; ``env_allow`` names more variables to pass. With a jail in the context each case
    runs in it (see :mod:`assay.evaluation.confine`).
    """

    name = "command"
    cpu_time = True  # record the case's CPU time (the ratchet judges time by it: load does not inflate it)

    def __init__(self, config: CommandRunnerConfig | AgentRunnerConfig, context: RunContext) -> None:
        super().__init__(config, context)
        try:
            self.template = CommandTemplate(config.command)
        except TemplateError as exc:
            raise TemplateError(f"runner.command: {exc}") from None
        self.limits = SandboxLimits(
            timeout_s=config.timeout,
            max_output_bytes=config.max_output_bytes,
            memory_mb=config.memory_mb,
            env_allow=tuple(config.env_allow),
        )
        # Computed once: scanning the environment for secrets per case is measurable at thousands of cases.
        self.env = scrubbed_env(self.limits.env_allow, dict(config.env))
        self.use_stdin = bool(getattr(config, "stdin", False))
        # Jailed cases run in long-lived jails, one per case in flight (see assay.sandbox.workers).
        self.workers = JailWorkers() if context.jail is not None else None

    async def run(self, case: Case, workdir: Path) -> Output:
        try:
            command = self.template.render(case)
        except MissingValue as exc:
            return Output(error=str(exc), workdir=str(workdir))
        stdin = case.prompt_text().encode("utf-8") if self.use_stdin else None
        jail = self.context.jail.for_workdir(workdir) if self.context.jail is not None else None
        result = await run_process(
            command,
            cwd=workdir,
            limits=self.limits,
            stdin=stdin,
            env=self.env,
            jail=jail,
            workers=self.workers,
        )
        output = output_from_process(result, workdir)
        if not self.cpu_time:
            output.cpu_s = None
        note_refusal(output, jail, workdir)
        return output
