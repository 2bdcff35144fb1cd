"""make_llm: provider classes, config errors, and working without the llm extra."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from assay.config import LLMSettings
from assay.errors import ConfigError
from assay.install import install_hint
from assay.llm import AnthropicChatModel, OpenAIChatModel, make_llm
from assay.llm.clients import import_sdk


def test_provider_picks_the_client_class(tmp_path: Path) -> None:
    anthropic_model = make_llm(
        LLMSettings(model="anthropic:claude-haiku-4-5", base_url="http://127.0.0.1:1"),
        cache_dir=None,
        use_cache=True,
    )
    local = make_llm(LLMSettings(model="ollama:llama3.2"), cache_dir=tmp_path, use_cache=True)
    assert isinstance(anthropic_model, AnthropicChatModel) and anthropic_model.cache is None
    assert (
        isinstance(local, OpenAIChatModel) and local.cache is not None and local.cache.directory == tmp_path
    )
    assert local.prices.cost(10**6, 10**6) == 0  # local models are free


def test_configured_price_is_used() -> None:
    llm = make_llm(
        LLMSettings(model="vllm:qwen", price_in_per_mtok=1.0, price_out_per_mtok=2.0),
        cache_dir=None,
        use_cache=False,
    )
    assert llm.prices.cost(1_000_000, 500_000) == pytest.approx(2.0)


def test_unknown_provider_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"unknown provider 'nope'; known: anthropic, llamacpp"):
        make_llm(LLMSettings(model="nope:x"), cache_dir=None, use_cache=False, section="judge")


def test_missing_sdk_names_the_extra() -> None:
    with pytest.raises(ConfigError, match=re.escape(install_hint("llm"))):
        import_sdk("assay_no_such_sdk_for_test")


def test_import_assay_without_the_llm_extra(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("openai", "anthropic"):
                    raise ImportError(f"blocked {name}")
                return None

        sys.meta_path.insert(0, Block())
        import assay, assay.checks, assay.llm, assay.runners
        from assay.config import LLMSettings
        from assay.errors import ConfigError
        try:
            assay.llm.make_llm(LLMSettings(model="ollama:x"), cache_dir=None, use_cache=False)
        except ConfigError as exc:
            print(exc)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert install_hint("llm") in done.stdout
