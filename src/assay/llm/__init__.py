"""Provider clients, retries, cost and token accounting, and the response cache.

``make_llm(settings, cache_dir=..., use_cache=...)`` is the entry point; the SDKs are imported only when a
model is built, so ``import assay`` works without the ``llm`` extra. The names below are imported on first
use: a judged check needs only :mod:`assay.llm.base`, not the clients.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.lazy import lazy_attributes

if TYPE_CHECKING:
    from assay.llm.base import LLM, Completion, LLMError
    from assay.llm.cache import ResponseCache, cache_key
    from assay.llm.clients import AnthropicChatModel, ChatModel, OpenAIChatModel
    from assay.llm.factory import make_llm
    from assay.llm.pricing import PRICES, Prices, prices_for, table_price
    from assay.llm.providers import PROVIDERS, Endpoint, Provider, resolve

__all__ = [
    "LLM",
    "PRICES",
    "PROVIDERS",
    "AnthropicChatModel",
    "ChatModel",
    "Completion",
    "Endpoint",
    "LLMError",
    "OpenAIChatModel",
    "Prices",
    "Provider",
    "ResponseCache",
    "cache_key",
    "make_llm",
    "prices_for",
    "resolve",
    "table_price",
]
_LAZY = {
    "LLM": "assay.llm.base",
    "Completion": "assay.llm.base",
    "LLMError": "assay.llm.base",
    "ResponseCache": "assay.llm.cache",
    "cache_key": "assay.llm.cache",
    "AnthropicChatModel": "assay.llm.clients",
    "ChatModel": "assay.llm.clients",
    "OpenAIChatModel": "assay.llm.clients",
    "make_llm": "assay.llm.factory",
    "PRICES": "assay.llm.pricing",
    "Prices": "assay.llm.pricing",
    "prices_for": "assay.llm.pricing",
    "table_price": "assay.llm.pricing",
    "PROVIDERS": "assay.llm.providers",
    "Endpoint": "assay.llm.providers",
    "Provider": "assay.llm.providers",
    "resolve": "assay.llm.providers",
}


__getattr__ = lazy_attributes("assay.llm", _LAZY)
