"""The scripted server itself: both wire formats, rules, forced statuses, usage and throughput."""

from __future__ import annotations

import asyncio
import time

import anthropic
import httpx
import openai
import pytest

from tests.fakes.llm_server import Rule, ScriptedLLMServer


def openai_client(server: ScriptedLLMServer, retries: int = 0) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key="sk-test", base_url=server.openai_url, max_retries=retries)


async def test_openai_rules_match_system_and_user(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_rule("french", system="French")
    llm_server.add_rule("weather", user=r"rain|sun")
    llm_server.default = "fallback"
    client = openai_client(llm_server)
    try:

        async def ask(system: str, user: str) -> str:
            response = await client.chat.completions.create(
                model="m",
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            )
            return response.choices[0].message.content or ""

        assert await ask("Answer in French", "rain?") == "french"
        assert await ask("Answer briefly", "will it rain?") == "weather"
        assert await ask("Answer briefly", "hello") == "fallback"
    finally:
        await client.close()
    seen = llm_server.requests
    assert [r.api for r in seen] == ["openai"] * 3
    assert seen[0].system == "Answer in French" and seen[1].user == "will it rain?"
    assert seen[0].headers["authorization"] == "Bearer sk-test"


async def test_anthropic_format_and_usage(llm_server: ScriptedLLMServer) -> None:
    llm_server.default = lambda body: f"echo {body['messages'][-1]['content']}"
    client = anthropic.AsyncAnthropic(api_key="k", base_url=llm_server.base_url, max_retries=0)
    try:
        message = await client.messages.create(
            model="claude-x",
            system="be terse please",
            max_tokens=10,
            messages=[{"role": "user", "content": "one two"}],
        )
    finally:
        await client.close()
    assert message.content[0].text == "echo one two"  # type: ignore[union-attr]
    # Word counts: "be terse please" + "one two" in, "echo one two" out.
    assert (message.usage.input_tokens, message.usage.output_tokens) == (5, 3)
    assert llm_server.requests[0].api == "anthropic" and llm_server.requests[0].system == "be terse please"


async def test_list_reply_served_in_turn_then_repeated() -> None:
    with ScriptedLLMServer(rules=[Rule(["a", "b"])], usage=(7, 3)) as server:
        client = openai_client(server)
        try:
            answers = []
            for _ in range(3):
                r = await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "q"}]
                )
                answers.append(r.choices[0].message.content)
                assert r.usage is not None and (r.usage.prompt_tokens, r.usage.completion_tokens) == (7, 3)
        finally:
            await client.close()
    assert answers == ["a", "b", "b"]


async def test_forced_statuses_then_success(llm_server: ScriptedLLMServer) -> None:
    llm_server.fail_next(429, 500)
    client = openai_client(llm_server, retries=2)
    try:
        r = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
    finally:
        await client.close()
    assert r.choices[0].message.content == "OK"
    assert [x.status for x in llm_server.requests] == [429, 500, 200]


def test_unknown_path_and_bad_json(llm_server: ScriptedLLMServer) -> None:
    assert httpx.post(f"{llm_server.base_url}/v1/embeddings", json={}).status_code == 404
    bad = httpx.post(f"{llm_server.openai_url}/chat/completions", content=b"{not json")
    assert bad.status_code == 400


def test_broken_reply_callable_is_a_500(llm_server: ScriptedLLMServer) -> None:
    llm_server.default = lambda body: body["missing"]
    response = httpx.post(f"{llm_server.base_url}/chat/completions", json={"messages": []})
    assert response.status_code == 500 and "KeyError" in response.json()["error"]["message"]


@pytest.mark.parametrize("concurrency", [32])
async def test_throughput_with_delay(concurrency: int) -> None:
    """≥ 32 concurrent requests with a 100 ms delay must be served at ≥ 25 req/s."""
    with ScriptedLLMServer(delay=0.1) as server:
        client = openai_client(server)
        try:
            messages = [{"role": "user", "content": "q"}]
            await client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
            started = time.perf_counter()
            await asyncio.gather(
                *(
                    client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
                    for _ in range(concurrency * 2)
                )
            )
            elapsed = time.perf_counter() - started
        finally:
            await client.close()
    rate = concurrency * 2 / elapsed
    assert rate >= 25, f"{rate:.1f} req/s"
    assert len(server.requests) == concurrency * 2 + 1
