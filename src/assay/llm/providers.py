"""Which provider a ``provider:model`` name means: wire API, base URL and API key."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from assay.config import LLMSettings
from assay.errors import ConfigError

Api = Literal["openai", "anthropic", "local"]

# Local servers ignore the key, but the SDK refuses an empty one.
PLACEHOLDER_KEY = "not-needed"


@dataclass(frozen=True)
class Provider:
    """A known provider. ``key_env`` is read for the API key; a key is required only when the base URL is
    the provider's public default (a self-hosted endpoint given by ``base_url`` may need none).
    ``url_env`` optionally overrides the default base URL (``OPENAI_BASE_URL``)."""

    name: str
    api: Api
    default_url: str
    key_env: str | None = None
    key_required: bool = False
    url_env: str | None = None
    priced: bool = False


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider(
            "openai",
            "openai",
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            key_required=True,
            url_env="OPENAI_BASE_URL",
            priced=True,
        ),
        Provider(
            "anthropic",
            "anthropic",
            "https://api.anthropic.com",
            "ANTHROPIC_API_KEY",
            key_required=True,
            url_env="ANTHROPIC_BASE_URL",
            priced=True,
        ),
        Provider(
            "openrouter",
            "openai",
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            key_required=True,
            priced=True,
        ),
        Provider("ollama", "openai", "http://localhost:11434/v1"),
        Provider("vllm", "openai", "http://localhost:8000/v1", "VLLM_API_KEY"),
        Provider("llamacpp", "openai", "http://localhost:8080/v1"),
        Provider("lmstudio", "openai", "http://localhost:1234/v1"),
        # In-process model (assay.llm.local); the URL only keys the response cache.
        Provider("local", "local", "local://"),
    )
}


@dataclass(frozen=True)
class Endpoint:
    """A resolved model: ``provider:name`` reached through ``api`` at ``base_url`` with ``api_key``."""

    provider: str
    name: str
    api: Api
    base_url: str
    api_key: str
    priced: bool

    @property
    def model(self) -> str:
        return f"{self.provider}:{self.name}"


def resolve(settings: LLMSettings, *, section: str | None = None) -> Endpoint:
    """Resolve ``settings`` to an Endpoint.

    Precedence for the base URL: ``settings.base_url``, then the provider's URL variable (``OPENAI_BASE_URL``,
    ``ANTHROPIC_BASE_URL``), then its default. A provider name that is not known is accepted as a generic
    OpenAI-compatible endpoint when ``base_url`` is given. Raises ConfigError (field ``<section>.model`` or
    ``<section>.api_key_env``) for an unknown provider or a missing key.
    """
    provider_name, name = settings.model.split(":", 1)
    provider = PROVIDERS.get(provider_name)

    def where(field: str) -> str:
        return f"{section}.{field}" if section else field

    if provider is None:
        if not settings.base_url:
            known = ", ".join(sorted(PROVIDERS))
            raise ConfigError(
                f"unknown provider {provider_name!r}; known: {known} "
                "(or set base_url for any OpenAI-compatible endpoint)",
                field=where("model"),
            )
        provider = Provider(provider_name, "openai", settings.base_url)

    env_url = os.environ.get(provider.url_env) if provider.url_env else None
    base_url = (settings.base_url or env_url or provider.default_url).rstrip("/")

    key_env = settings.api_key_env or provider.key_env
    key = os.environ.get(key_env) if key_env else None
    if not key:
        explicit = settings.api_key_env is not None
        if explicit or (provider.key_required and base_url == provider.default_url.rstrip("/")):
            raise ConfigError(
                f"environment variable {key_env} is not set; provider {provider_name!r} needs an API key "
                "(export it, or name another variable in api_key_env)",
                field=where("api_key_env" if explicit else "model"),
            )
        key = PLACEHOLDER_KEY
    return Endpoint(provider_name, name, provider.api, base_url, key, provider.priced)
