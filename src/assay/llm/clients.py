"""Chat models over the ``openai`` and ``anthropic`` SDKs, with caching, accounting and one-line errors.

Retries with backoff on 429/5xx/timeouts are the SDKs' own (``max_retries``); a call that still fails
raises LLMError. The SDK client is created lazily, once per event loop, because an async HTTP pool belongs
to the loop that opened it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
from abc import ABC, abstractmethod
from types import ModuleType
from typing import Any

from assay.config import LLMSettings
from assay.errors import ConfigError
from assay.install import install_hint
from assay.llm.base import Completion, LLMError
from assay.llm.cache import ResponseCache, cache_key
from assay.llm.pricing import Prices
from assay.llm.providers import Endpoint

MAX_REASON = 300


def import_sdk(name: str) -> ModuleType:
    """Import an SDK (``openai`` or ``anthropic``) or fail with the install hint."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ConfigError(
            f"the {name!r} package is not installed; run: {install_hint('llm')}", field="model"
        ) from None


def one_line(text: str, limit: int = MAX_REASON) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class ChatModel(ABC):
    """The LLM protocol implemented once for every provider: cache lookup, the provider call, cost.

    ``temperature=None`` and ``max_tokens=None`` mean the configured ``settings`` values.
    """

    def __init__(
        self,
        settings: LLMSettings,
        endpoint: Endpoint,
        prices: Prices,
        cache: ResponseCache | None = None,
    ) -> None:
        self.settings = settings
        self.endpoint = endpoint
        self.prices = prices
        self.cache = cache
        self.model = endpoint.model
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        system: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        sample: int = 0,
    ) -> Completion:
        """One answer. Raises LLMError with a one-line reason when the call fails after retries."""
        temp = self.settings.temperature if temperature is None else temperature
        limit = max_tokens or self.settings.max_tokens
        key = ""
        if self.cache is not None:
            key = cache_key(
                model=self.model,
                base_url=self.endpoint.base_url,
                system=system,
                messages=messages,
                temperature=temp,
                max_tokens=limit,
                sample=sample,
            )
            hit = self.cache.get(key)
            if hit is not None:
                return hit
        try:
            text, tokens_in, tokens_out = await self._call(
                self._client_for_loop(), messages, system, temp, limit
            )
        except LLMError:
            raise
        except Exception as exc:
            raise LLMError(f"{self.model}: {self.describe(exc)}") from exc
        completion = Completion(
            text=text,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost_usd=self.prices.cost(tokens_in, tokens_out),
            model=self.model,
        )
        if self.cache is not None:
            # A cache that cannot be written only costs a repeat call later.
            with contextlib.suppress(OSError):
                self.cache.put(key, completion)
        return completion

    def describe(self, exc: Exception) -> str:
        """A one-line reason for a failed call."""
        status = getattr(exc, "status_code", None)
        if status is not None:
            body = getattr(exc, "body", None)
            message: Any = getattr(exc, "message", str(exc))
            if isinstance(body, dict):
                inner = body.get("error", body)
                if isinstance(inner, dict) and inner.get("message"):
                    message = inner["message"]
            retried = status == 429 or status >= 500 or status in (408, 409)
            tail = f" (gave up after {self.settings.max_retries} retries)" if retried else ""
            return one_line(f"HTTP {status}: {message}{tail}")
        kind = type(exc).__name__
        if "Timeout" in kind:
            return f"request timed out after {self.settings.timeout:g}s at {self.endpoint.base_url}"
        if "Connection" in kind:
            return one_line(f"cannot connect to {self.endpoint.base_url}: {exc}")
        return one_line(f"{kind}: {exc}")

    def _client_for_loop(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = self._make_client()
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP pool (call from the loop that used it)."""
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            await client.close()

    @abstractmethod
    def _make_client(self) -> Any: ...

    @abstractmethod
    async def _call(
        self,
        client: Any,
        messages: list[dict[str, str]],
        system: str | None,
        temperature: float,
        max_tokens: int,
    ) -> tuple[str, int, int]:
        """Return (text, tokens_in, tokens_out)."""


class OpenAIChatModel(ChatModel):
    """OpenAI and every OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter)."""

    def _make_client(self) -> Any:
        sdk = import_sdk("openai")
        return sdk.AsyncOpenAI(
            api_key=self.endpoint.api_key,
            base_url=self.endpoint.base_url,
            max_retries=self.settings.max_retries,
            timeout=self.settings.timeout,
        )

    async def _call(
        self,
        client: Any,
        messages: list[dict[str, str]],
        system: str | None,
        temperature: float,
        max_tokens: int,
    ) -> tuple[str, int, int]:
        chat = [{"role": "system", "content": system}, *messages] if system else list(messages)
        response = await client.chat.completions.create(
            model=self.endpoint.name, messages=chat, temperature=temperature, max_tokens=max_tokens
        )
        if not response.choices:
            raise LLMError(f"{self.model}: the response has no choices")
        text = response.choices[0].message.content or ""
        usage = response.usage
        tokens_in = (usage.prompt_tokens or 0) if usage else 0
        tokens_out = (usage.completion_tokens or 0) if usage else 0
        return text, tokens_in, tokens_out


def _accepts_temperature(client: Any) -> bool:
    return "temperature" in inspect.signature(client.messages.create).parameters


class AnthropicChatModel(ChatModel):
    """Anthropic's Messages API through the ``anthropic`` SDK.

    SDK 2.x speaks API version 2026-10-21, which rejects sampling parameters, and its ``create`` no longer
    takes ``temperature``; the temperature is then not sent (it still keys the cache). Older SDKs get it.
    """

    def _make_client(self) -> Any:
        sdk = import_sdk("anthropic")
        return sdk.AsyncAnthropic(
            api_key=self.endpoint.api_key,
            base_url=self.endpoint.base_url,
            max_retries=self.settings.max_retries,
            timeout=self.settings.timeout,
        )

    async def _call(
        self,
        client: Any,
        messages: list[dict[str, str]],
        system: str | None,
        temperature: float,
        max_tokens: int,
    ) -> tuple[str, int, int]:
        extra: dict[str, Any] = {"system": system} if system else {}
        if _accepts_temperature(client):
            extra["temperature"] = temperature
        response = await client.messages.create(
            model=self.endpoint.name,
            messages=messages,
            max_tokens=max_tokens,
            **extra,
        )
        text = "".join(getattr(block, "text", "") for block in response.content)
        usage = response.usage
        tokens_in = (
            (usage.input_tokens or 0)
            + (getattr(usage, "cache_creation_input_tokens", None) or 0)
            + (getattr(usage, "cache_read_input_tokens", None) or 0)
        )
        return text, tokens_in, usage.output_tokens or 0
