"""Real providers, only when a key or base URL is set (``-m live``; skipped otherwise)."""

from __future__ import annotations

import os

import pytest

from assay.config import LLMSettings
from assay.llm import make_llm

pytestmark = pytest.mark.live
QUESTION = [{"role": "user", "content": "Reply with the single word: ready"}]


@pytest.mark.skipif(
    not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")),
    reason="set OPENAI_API_KEY or OPENAI_BASE_URL to run live OpenAI tests",
)
async def test_live_openai_complete() -> None:
    model = os.environ.get("ASSAY_LIVE_OPENAI_MODEL", "gpt-4o-mini")
    llm = make_llm(LLMSettings(model=f"openai:{model}", max_tokens=20), cache_dir=None, use_cache=False)
    try:
        completion = await llm.complete(QUESTION)
    finally:
        await llm.aclose()
    assert "ready" in completion.text.lower()
    assert completion.tokens_in > 0 and completion.tokens_out > 0


@pytest.mark.skipif(not os.environ.get("ANTHROPIC_API_KEY"), reason="set ANTHROPIC_API_KEY to run live tests")
async def test_live_anthropic_complete() -> None:
    model = os.environ.get("ASSAY_LIVE_ANTHROPIC_MODEL", "claude-haiku-4-5")
    llm = make_llm(LLMSettings(model=f"anthropic:{model}", max_tokens=20), cache_dir=None, use_cache=False)
    try:
        completion = await llm.complete(QUESTION, system="You follow instructions exactly.")
    finally:
        await llm.aclose()
    assert "ready" in completion.text.lower()
    assert completion.tokens_in > 0 and completion.cost_usd > 0
