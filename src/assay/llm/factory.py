"""``make_llm``: settings in, a ready chat model out (validated now, connected on first use)."""

from __future__ import annotations

from pathlib import Path

from assay.config import LLMSettings
from assay.llm.cache import ResponseCache
from assay.llm.clients import AnthropicChatModel, ChatModel, OpenAIChatModel, import_sdk
from assay.llm.pricing import prices_for
from assay.llm.providers import resolve


def make_llm(
    settings: LLMSettings,
    *,
    cache_dir: Path | None,
    use_cache: bool,
    section: str | None = None,
) -> ChatModel:
    """Build the model ``settings.model`` (``provider:name``) names; ``local:...`` is an in-process model
    (:mod:`assay.llm.local`).

    Raises ConfigError — never a bare exception — for an unknown provider, a missing API key or a missing
    SDK; ``section`` (``runner``, ``judge``) prefixes the error's field so it reads ``judge.model``.
    Answers are cached under ``cache_dir`` when ``use_cache`` is true and a directory is given.
    """
    endpoint = resolve(settings, section=section)
    cache = ResponseCache(cache_dir) if use_cache and cache_dir is not None else None
    if endpoint.api == "local":
        from assay.llm.local import make_local_llm  # torch and transformers only when asked for

        return make_local_llm(settings, cache=cache, section=section)
    import_sdk(endpoint.api)
    prices = prices_for(
        endpoint.name,
        priced=endpoint.priced,
        price_in=settings.price_in_per_mtok,
        price_out=settings.price_out_per_mtok,
    )
    cls = AnthropicChatModel if endpoint.api == "anthropic" else OpenAIChatModel
    return cls(settings, endpoint, prices, cache)
