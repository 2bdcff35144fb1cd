"""The ``llm`` runner: the artifact is a prompt file, each case becomes one model call."""

from __future__ import annotations

import json
import re
import stat
import time
from pathlib import Path
from typing import Any

from assay.config import LLMRunnerConfig
from assay.errors import ConfigError
from assay.llm.base import RUN_INDEX, LLMError
from assay.llm.factory import make_llm
from assay.model import Case, Output
from assay.runners.base import RUNNERS, RunContext, Runner

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")
# Template syntax beyond plain {{name}} placeholders: tags, comments, filters or expressions.
_NUNJUCKS = re.compile(r"\{%|\{#|\{\{(?!\s*[A-Za-z_][\w.]*\s*\}\})")
GLOB_CHARS = frozenset("*?[")
MAX_PROMPT_BYTES = 10 * 2**20


class PromptTemplateError(ValueError):
    """A template names a variable the case does not define."""


def render_template(template: str, case: Case) -> str:
    """Fill ``{{name}}`` / ``{{vars.name}}`` from the case's vars and ``{{input}}`` from its input.

    Non-string values are rendered as JSON. An undefined name raises PromptTemplateError (a typo in a prompt
    should fail the case visibly, not silently send an empty slot). A template with more of Nunjucks than
    plain placeholders (``{% if %}``, filters; promptfoo prompts) is rendered Nunjucks-style instead
    (:mod:`assay.templating`).
    """
    if _NUNJUCKS.search(template):
        from assay.templating import TemplateError, render

        names = {
            **case.vars,
            "vars": case.vars,
            "input": case.input if case.input is not None else case.prompt_text(),
        }
        try:
            return render(template, names)
        except TemplateError as exc:
            raise PromptTemplateError(f"template error: {exc}") from None

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        key = name.removeprefix("vars.")
        if name == "input" and case.input is not None:
            found: Any = case.input
        elif key in case.vars:
            found = case.vars[key]
        elif name == "input":
            found = case.prompt_text()
        else:
            raise PromptTemplateError(f"template variable {name!r} is not defined by case {case.id!r}")
        return found if isinstance(found, str) else json.dumps(found, ensure_ascii=False)

    return PLACEHOLDER.sub(value, template)


@RUNNERS.register("llm")
class LLMRunner(Runner):
    """Sends each case to a model with the artifact as the prompt.

    ``mode: system`` — the prompt file is the system prompt and the case's text the user message.
    ``mode: template`` — the prompt file is rendered with the case's ``{{vars}}`` and sent as the user
    message. The file is ``config.prompt`` relative to the run's workdir, else the first artifact path; it is
    re-read whenever it changes, since every candidate edits it.
    """

    name = "llm"
    io_bound = True

    def __init__(self, config: LLMRunnerConfig, context: RunContext) -> None:
        super().__init__(config, context)
        self.config: LLMRunnerConfig = config
        if config.prompt is None and not context.artifact_paths:
            raise ConfigError(
                "no prompt file: set runner.prompt or list the prompt in artifact.paths",
                field="runner.prompt",
            )
        self._files: dict[Path, tuple[tuple[int, ...], str]] = {}
        self._check_prompt_file()
        self.llm = make_llm(
            config, cache_dir=context.cache_dir, use_cache=context.use_cache, section="runner"
        )

    def _check_prompt_file(self) -> None:
        """The prompt must be readable in the artifact directory before anything else (an API key) is
        checked: a missing file is the first thing to fix."""
        field = "runner.prompt" if self.config.prompt is not None else "artifact.paths[0]"
        path = self.prompt_path(self.context.artifact_dir)
        try:
            self.read_prompt(path)
        except (OSError, UnicodeDecodeError) as exc:
            reason = "file not found" if isinstance(exc, FileNotFoundError) else f"cannot read: {exc}"
            raise ConfigError(f"prompt file {str(path)!r}: {reason}", field=field) from None

    def default_concurrency(self) -> int:
        return self.config.concurrency or super().default_concurrency()

    def prompt_path(self, workdir: Path) -> Path:
        """Where the prompt is read from for a run in ``workdir``."""
        relative = self.config.prompt or self.context.artifact_paths[0]
        if GLOB_CHARS.intersection(relative):
            matches = sorted(p for p in workdir.glob(relative) if p.is_file())
            if matches:
                return matches[0]
        return workdir / relative

    def read_prompt(self, path: Path) -> str:
        """The prompt text, read again only when the file changed (inode, size, mtime or ctime)."""
        info = path.stat()
        signature = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        known = self._files.get(path)
        if known and known[0] == signature:
            return known[1]
        if not stat.S_ISREG(info.st_mode):
            raise OSError("not a regular file")
        if info.st_size > MAX_PROMPT_BYTES:
            raise OSError(f"larger than {MAX_PROMPT_BYTES // 2**20} MB (assay's limit for prompt files)")
        text = path.read_text(encoding="utf-8")
        self._files[path] = (signature, text)
        return text

    async def run(self, case: Case, workdir: Path) -> Output:
        started = time.perf_counter()
        try:
            path = self.prompt_path(Path(workdir))
            try:
                prompt = self.read_prompt(path)
            except (OSError, UnicodeDecodeError) as exc:
                return Output(error=f"cannot read prompt file {path}: {exc}", workdir=str(workdir))
            if self.config.mode == "template":
                system, user = None, render_template(prompt, case)
            else:
                system, user = prompt, case.prompt_text()
            completion = await self.llm.complete(
                [{"role": "user", "content": user}], system=system, sample=RUN_INDEX.get()
            )
        except (LLMError, PromptTemplateError) as exc:
            return Output(error=str(exc), duration_s=time.perf_counter() - started, workdir=str(workdir))
        except Exception as exc:  # a runner never raises for a case
            return Output(
                error=f"llm runner error: {type(exc).__name__}: {exc}",
                duration_s=time.perf_counter() - started,
                workdir=str(workdir),
            )
        return Output(
            text=completion.text,
            tokens_in=completion.tokens_in,
            tokens_out=completion.tokens_out,
            cost_usd=completion.cost_usd,
            duration_s=time.perf_counter() - started,
            workdir=str(workdir),
            meta={
                "model": completion.model or self.llm.model,
                "cached": completion.cached,
                # the rendered prompt is what promptfoo's python/javascript assertions see as context.prompt
                **({"prompt": user} if self.config.mode == "template" else {}),
            },
        )

    async def aclose(self) -> None:
        await self.llm.aclose()
