"""Chat models through the real SDKs against the scripted server: formats, retries, accounting, cache."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest

from assay.config import LLMSettings
from assay.llm import ChatModel, LLMError, make_llm
from tests.fakes.llm_server import ScriptedLLMServer

USER = [{"role": "user", "content": "What is 2+2?"}]


def build(
    server: ScriptedLLMServer, model: str = "openai:gpt-4o-mini", *, cache_dir: Path | None = None, **kw: Any
) -> ChatModel:
    url = server.base_url if model.startswith("anthropic:") else server.openai_url
    settings = LLMSettings(model=model, base_url=url, max_retries=kw.pop("max_retries", 2), **kw)
    return make_llm(settings, cache_dir=cache_dir, use_cache=cache_dir is not None)


async def test_openai_path_text_tokens_cost(llm_server: ScriptedLLMServer) -> None:
    llm_server.usage = (1000, 200)
    llm_server.add_rule("4", system="calculator", user=r"2\+2")
    llm = build(llm_server, temperature=0.3, max_tokens=50)
    try:
        completion = await llm.complete(USER, system="You are a calculator.")
    finally:
        await llm.aclose()
    assert (completion.text, completion.tokens_in, completion.tokens_out) == ("4", 1000, 200)
    assert completion.cost_usd == pytest.approx((1000 * 0.15 + 200 * 0.60) / 1e6)
    assert (completion.model, completion.cached) == ("openai:gpt-4o-mini", False)
    body = llm_server.requests[0].body
    assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0.3 and body["max_tokens"] == 50
    assert body["messages"][0] == {"role": "system", "content": "You are a calculator."}


async def test_anthropic_path_text_tokens_cost(llm_server: ScriptedLLMServer) -> None:
    llm_server.usage = (2000, 100)
    llm_server.add_rule("four", system="calculator")
    llm = build(llm_server, "anthropic:claude-3-5-haiku-latest", max_tokens=64)
    try:
        completion = await llm.complete(USER, system="You are a calculator.")
    finally:
        await llm.aclose()
    assert (completion.text, completion.tokens_in, completion.tokens_out) == ("four", 2000, 100)
    assert completion.cost_usd == pytest.approx((2000 * 0.80 + 100 * 4.0) / 1e6)
    seen = llm_server.requests[0]
    assert seen.api == "anthropic" and seen.body["system"] == "You are a calculator."
    assert seen.body["max_tokens"] == 64 and seen.body["messages"] == USER


@pytest.mark.parametrize("model", ["openai:gpt-4o", "anthropic:claude-haiku-4-5"])
async def test_retries_429_then_500_then_success(llm_server: ScriptedLLMServer, model: str) -> None:
    llm_server.fail_next(429, 500)
    llm = build(llm_server, model, max_retries=2)
    try:
        completion = await llm.complete(USER)
    finally:
        await llm.aclose()
    assert completion.text == "OK"
    assert [r.status for r in llm_server.requests] == [429, 500, 200]


@pytest.mark.parametrize("model", ["openai:gpt-4o", "anthropic:claude-haiku-4-5"])
async def test_gives_up_after_max_retries(llm_server: ScriptedLLMServer, model: str) -> None:
    llm_server.fail_next(500, 500, 500, 500)
    llm = build(llm_server, model, max_retries=2)
    try:
        with pytest.raises(LLMError) as info:
            await llm.complete(USER)
    finally:
        await llm.aclose()
    message = str(info.value)
    assert "\n" not in message and "HTTP 500" in message and "gave up after 2 retries" in message
    assert len(llm_server.requests) == 3  # one try and two retries, then the error


async def test_client_errors_are_not_retried(llm_server: ScriptedLLMServer) -> None:
    llm_server.fail_next(400)
    llm = build(llm_server, max_retries=3)
    try:
        with pytest.raises(LLMError, match=r"HTTP 400: scripted failure 400$"):
            await llm.complete(USER)
    finally:
        await llm.aclose()
    assert len(llm_server.requests) == 1


async def test_unreachable_server_is_an_llm_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = LLMSettings(model="ollama:x", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    llm = make_llm(settings, cache_dir=None, use_cache=False)
    try:
        with pytest.raises(LLMError, match=r"cannot connect to http://127\.0\.0\.1"):
            await llm.complete(USER)
    finally:
        await llm.aclose()


async def test_cache_hit_on_rerun_costs_nothing(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.usage = (100, 10)
    llm = build(llm_server, cache_dir=tmp_path)
    again = build(llm_server, cache_dir=tmp_path)  # a new process would build a new model
    try:
        first = await llm.complete(USER, system="s")
        second = await again.complete(USER, system="s")
        other_sample = await again.complete(USER, system="s", sample=1)
    finally:
        await llm.aclose()
        await again.aclose()
    assert first.cost_usd > 0 and not first.cached
    assert (second.text, second.tokens_in, second.tokens_out, second.cost_usd, second.cached) == (
        "OK",
        100,
        10,
        0.0,
        True,
    )
    assert not other_sample.cached
    assert len(llm_server.requests) == 2  # the rerun never reached the server
    assert len(list(tmp_path.glob("*.json"))) == 2


async def test_use_cache_false_bypasses(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    settings = LLMSettings(model="openai:m", base_url=llm_server.openai_url)
    llm = make_llm(settings, cache_dir=tmp_path, use_cache=False)
    try:
        await llm.complete(USER)
        again = await llm.complete(USER)
    finally:
        await llm.aclose()
    assert not again.cached and len(llm_server.requests) == 2
    assert list(tmp_path.iterdir()) == []


async def test_failures_are_not_cached(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.fail_next(500)
    llm = build(llm_server, cache_dir=tmp_path, max_retries=0)
    try:
        with pytest.raises(LLMError):
            await llm.complete(USER)
        assert list(tmp_path.glob("*.json")) == []
        assert (await llm.complete(USER)).text == "OK"
    finally:
        await llm.aclose()
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_model_survives_a_new_event_loop(llm_server: ScriptedLLMServer) -> None:
    """An HTTP pool belongs to its loop: a second asyncio.run gets a fresh client, not a dead one."""
    llm = build(llm_server)

    async def first() -> str:
        text = (await llm.complete(USER)).text
        await llm._client.close()  # what a finished loop leaves behind; keeps the reference in place
        return text

    assert asyncio.run(first()) == "OK"
    stale = llm._client
    llm_server.default = "again"

    async def second() -> str:
        try:
            answer = (await llm.complete(USER)).text
            assert llm._client is not stale
            return answer
        finally:
            await llm.aclose()

    assert asyncio.run(second()) == "again"
