"""Provider clients, retries, cost and token accounting, and the response cache.

``make_llm(settings, cache_dir=..., use_cache=...)`` is the entry point; the SDKs are imported only when a
model is built, so ``import assay`` works without the ``llm`` extra.
"""

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
