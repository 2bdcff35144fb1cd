"""Resolving ``provider:model`` to an endpoint: URLs, keys and errors."""

from __future__ import annotations

import pytest

from assay.config import LLMSettings
from assay.errors import ConfigError
from assay.llm.providers import PLACEHOLDER_KEY, resolve


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENROUTER_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("model", "url"),
    [
        ("ollama:llama3.2", "http://localhost:11434/v1"),
        ("vllm:qwen", "http://localhost:8000/v1"),
        ("llamacpp:any", "http://localhost:8080/v1"),
        ("lmstudio:any", "http://localhost:1234/v1"),
    ],
)
def test_local_providers_need_no_key(model: str, url: str) -> None:
    endpoint = resolve(LLMSettings(model=model))
    assert (endpoint.api, endpoint.base_url, endpoint.api_key) == ("openai", url, PLACEHOLDER_KEY)
    assert endpoint.model == model and not endpoint.priced


def test_openai_key_and_env_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc")
    endpoint = resolve(LLMSettings(model="openai:gpt-4o-mini"))
    assert (endpoint.base_url, endpoint.api_key, endpoint.name) == (
        "https://api.openai.com/v1",
        "sk-abc",
        "gpt-4o-mini",
    )
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")
    assert resolve(LLMSettings(model="openai:gpt-4o-mini")).base_url == "http://127.0.0.1:9/v1"
    # settings.base_url beats the environment.
    assert resolve(LLMSettings(model="openai:x", base_url="http://h/v1")).base_url == "http://h/v1"


def test_missing_key_for_public_endpoint_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        resolve(LLMSettings(model="anthropic:claude-sonnet-4-5"), section="judge")
    assert info.value.field == "judge.model"
    assert "ANTHROPIC_API_KEY" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ConfigError, match="OPENROUTER_API_KEY"):
        resolve(LLMSettings(model="openrouter:openai/gpt-4o"))


def test_self_hosted_base_url_needs_no_key() -> None:
    endpoint = resolve(LLMSettings(model="openai:local", base_url="http://127.0.0.1:1/v1"))
    assert endpoint.api_key == PLACEHOLDER_KEY


def test_explicit_key_env_must_exist(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = LLMSettings(model="ollama:x", api_key_env="MY_KEY_FOR_TEST")
    with pytest.raises(ConfigError) as info:
        resolve(settings, section="runner")
    assert info.value.field == "runner.api_key_env" and "MY_KEY_FOR_TEST" in str(info.value)
    monkeypatch.setenv("MY_KEY_FOR_TEST", "secret")
    assert resolve(settings).api_key == "secret"


def test_unknown_provider_lists_known_ones() -> None:
    with pytest.raises(ConfigError) as info:
        resolve(LLMSettings(model="mistral:large"), section="runner")
    message = str(info.value)
    assert info.value.field == "runner.model"
    for name in ("anthropic", "llamacpp", "lmstudio", "ollama", "openai", "openrouter", "vllm"):
        assert name in message


def test_unknown_provider_with_base_url_is_openai_compatible() -> None:
    endpoint = resolve(LLMSettings(model="together:mixtral", base_url="https://api.together.xyz/v1"))
    assert (endpoint.api, endpoint.base_url, endpoint.name) == (
        "openai",
        "https://api.together.xyz/v1",
        "mixtral",
    )
