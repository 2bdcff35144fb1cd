"""The llm runner through the real SDKs against the scripted server."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from assay.config import LLMRunnerConfig
from assay.errors import ConfigError
from assay.model import Case
from assay.runners import RUNNERS
from assay.runners.base import RunContext
from assay.runners.llm import LLMRunner, PromptTemplateError, render_template
from tests.fakes.llm_server import ScriptedLLMServer


def make_runner(
    server: ScriptedLLMServer,
    workdir: Path,
    *,
    model: str = "openai:gpt-4o-mini",
    cache_dir: Path | None = None,
    use_cache: bool = True,
    artifact_paths: list[str] | None = None,
    **options: Any,
) -> LLMRunner:
    url = server.base_url if model.startswith("anthropic:") else server.openai_url
    options.setdefault("prompt", "prompt.md")
    options.setdefault("max_retries", 2)
    config = LLMRunnerConfig(model=model, base_url=url, **options)
    context = RunContext(
        artifact_dir=workdir,
        project_dir=workdir,
        cache_dir=cache_dir,
        use_cache=use_cache,
        artifact_paths=artifact_paths or [],
    )
    return LLMRunner(config, context)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "prompt.md").write_text("You are a pirate. Answer in one line.")
    return tmp_path


async def test_registered_and_io_bound(llm_server: ScriptedLLMServer, workdir: Path) -> None:
    assert RUNNERS.get("llm") is LLMRunner and LLMRunner.io_bound
    assert make_runner(llm_server, workdir).default_concurrency() == 32
    assert make_runner(llm_server, workdir, concurrency=5).default_concurrency() == 5


@pytest.mark.parametrize("model", ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest"])
async def test_system_mode(llm_server: ScriptedLLMServer, workdir: Path, model: str) -> None:
    llm_server.usage = (1000, 100)
    llm_server.add_rule("Arr, 4.", system="pirate", user=r"2\+2")
    runner = make_runner(llm_server, workdir, model=model)
    try:
        out = await runner.run(Case(id="c", input="What is 2+2?"), workdir)
    finally:
        await runner.aclose()
    assert out.ok and out.text == "Arr, 4."
    assert (out.tokens_in, out.tokens_out) == (1000, 100)
    expected_cost = 0.15e-3 + 0.06e-3 if model.startswith("openai") else 0.8e-3 + 0.4e-3
    assert out.cost_usd == pytest.approx(expected_cost)
    assert out.meta == {"model": model, "cached": False}
    assert out.duration_s > 0 and out.workdir == str(workdir)
    seen = llm_server.requests[0]
    assert seen.system == "You are a pirate. Answer in one line." and seen.user == "What is 2+2?"


async def test_template_mode_with_vars(llm_server: ScriptedLLMServer, workdir: Path) -> None:
    (workdir / "tpl.txt").write_text(
        "Translate {{ text }} into {{vars.lang}}. Options: {{opts}}. Raw: {{input}}"
    )
    runner = make_runner(llm_server, workdir, prompt="tpl.txt", mode="template")
    case = Case(id="t", vars={"text": "cheese", "lang": "French", "opts": {"formal": True}})
    try:
        out = await runner.run(case, workdir)
    finally:
        await runner.aclose()
    assert out.ok
    seen = llm_server.requests[0]
    assert seen.system == ""
    assert seen.user == (
        'Translate cheese into French. Options: {"formal": true}. Raw: text: cheese\nlang: French\nopts: '
        "{'formal': True}"
    )


def test_render_template_prefers_input_and_rejects_unknown() -> None:
    assert render_template("Q: {{input}}", Case(id="a", input="why?", vars={"input": "x"})) == "Q: why?"
    with pytest.raises(PromptTemplateError, match="'missing' is not defined by case 'a'"):
        render_template("{{missing}}", Case(id="a"))


async def test_undefined_template_variable_is_an_error_output(
    llm_server: ScriptedLLMServer, workdir: Path
) -> None:
    (workdir / "tpl.txt").write_text("Hello {{name}}")
    runner = make_runner(llm_server, workdir, prompt="tpl.txt", mode="template")
    out = await runner.run(Case(id="x", input="hi"), workdir)
    assert not out.ok and "'name' is not defined" in (out.error or "")
    assert llm_server.requests == []


async def test_prompt_defaults_to_first_artifact_path(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "b.md").write_text("second")
    (tmp_path / "prompts" / "a.md").write_text("first")
    runner = make_runner(llm_server, tmp_path, prompt=None, artifact_paths=["prompts/*.md"])
    try:
        assert (await runner.run(Case(id="c", input="q"), tmp_path)).ok
    finally:
        await runner.aclose()
    assert llm_server.requests[0].system == "first"


def test_no_prompt_anywhere_is_a_config_error(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        make_runner(llm_server, tmp_path, prompt=None)
    assert info.value.field == "runner.prompt"


def test_unknown_provider_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("a prompt")
    config = LLMRunnerConfig(model="nope:x", prompt="p.md")
    with pytest.raises(ConfigError) as info:
        LLMRunner(config, RunContext(artifact_dir=tmp_path, project_dir=tmp_path))
    assert info.value.field == "runner.model" and "ollama" in str(info.value)


async def test_prompt_is_reread_when_it_changes(llm_server: ScriptedLLMServer, workdir: Path) -> None:
    runner = make_runner(llm_server, workdir)
    prompt = workdir / "prompt.md"
    try:
        await runner.run(Case(id="c", input="q"), workdir)
        prompt.write_text("You are a poet, and a longer prompt.")
        await runner.run(Case(id="c", input="q"), workdir)
        # A candidate worktree is another directory with its own copy of the prompt.
        other = workdir / "candidate"
        other.mkdir()
        (other / "prompt.md").write_text("candidate prompt")
        await runner.run(Case(id="c", input="q"), other)
    finally:
        await runner.aclose()
    assert [r.system for r in llm_server.requests] == [
        "You are a pirate. Answer in one line.",
        "You are a poet, and a longer prompt.",
        "candidate prompt",
    ]


async def test_prompt_file_removed_by_a_candidate_is_an_error_output(
    llm_server: ScriptedLLMServer, workdir: Path
) -> None:
    runner = make_runner(llm_server, workdir)
    (workdir / "prompt.md").unlink()
    out = await runner.run(Case(id="c", input="q"), workdir)
    assert not out.ok and "cannot read prompt file" in (out.error or "")


def test_missing_prompt_file_is_a_config_error_before_the_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = LLMRunnerConfig(model="openai:gpt-4o-mini", prompt="missing.md")
    with pytest.raises(ConfigError) as info:
        LLMRunner(config, RunContext(artifact_dir=tmp_path, project_dir=tmp_path))
    assert info.value.field == "runner.prompt" and "file not found" in info.value.message
    (tmp_path / "missing.md").write_text("now it exists")
    with pytest.raises(ConfigError) as info:
        LLMRunner(config, RunContext(artifact_dir=tmp_path, project_dir=tmp_path))
    assert "OPENAI_API_KEY" in info.value.message


async def test_retries_then_success(llm_server: ScriptedLLMServer, workdir: Path) -> None:
    llm_server.fail_next(429, 500)
    runner = make_runner(llm_server, workdir, max_retries=2)
    try:
        out = await runner.run(Case(id="c", input="q"), workdir)
    finally:
        await runner.aclose()
    assert out.ok and out.text == "OK"
    assert [r.status for r in llm_server.requests] == [429, 500, 200]


@pytest.mark.parametrize("model", ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"])
async def test_gives_up_with_an_error_output(
    llm_server: ScriptedLLMServer, workdir: Path, model: str
) -> None:
    llm_server.fail_next(*[503] * 5)
    runner = make_runner(llm_server, workdir, model=model, max_retries=1)
    try:
        out = await runner.run(Case(id="c", input="q"), workdir)
    finally:
        await runner.aclose()
    assert not out.ok and out.text == ""
    assert out.error is not None and "HTTP 503" in out.error and "gave up after 1 retries" in out.error
    assert len(llm_server.requests) == 2


async def test_cache_hit_on_rerun_and_bypass(
    llm_server: ScriptedLLMServer, workdir: Path, tmp_path: Path
) -> None:
    llm_server.usage = (50, 5)
    cache = tmp_path / "cache"
    case = Case(id="c", input="q")
    first_runner = make_runner(llm_server, workdir, cache_dir=cache)
    rerun = make_runner(llm_server, workdir, cache_dir=cache)
    bypass = make_runner(llm_server, workdir, cache_dir=cache, use_cache=False)
    try:
        first = await first_runner.run(case, workdir)
        second = await rerun.run(case, workdir)
        assert len(llm_server.requests) == 1  # the rerun never reached the server
        third = await bypass.run(case, workdir)
    finally:
        for r in (first_runner, rerun, bypass):
            await r.aclose()
    assert first.cost_usd > 0 and first.meta["cached"] is False
    assert second.meta["cached"] is True and second.cost_usd == 0
    assert (second.text, second.tokens_in, second.tokens_out) == (first.text, 50, 5)
    assert third.meta["cached"] is False and len(llm_server.requests) == 2


async def test_many_cases_concurrently(llm_server: ScriptedLLMServer, workdir: Path) -> None:
    llm_server.default = lambda body: body["messages"][-1]["content"].upper()
    runner = make_runner(llm_server, workdir)
    try:
        outs = await asyncio.gather(
            *(runner.run(Case(id=f"c{i}", input=f"case {i}"), workdir) for i in range(40))
        )
    finally:
        await runner.aclose()
    assert [o.text for o in outs] == [f"CASE {i}" for i in range(40)]
    assert all(o.ok for o in outs)


@pytest.mark.live
@pytest.mark.skipif(
    not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")),
    reason="set OPENAI_API_KEY or OPENAI_BASE_URL to run live-provider tests",
)
async def test_live_openai_runner(workdir: Path) -> None:
    model = os.environ.get("ASSAY_LIVE_OPENAI_MODEL", "gpt-4o-mini")
    config = LLMRunnerConfig(model=f"openai:{model}", prompt="prompt.md", max_tokens=30)
    runner = LLMRunner(config, RunContext(artifact_dir=workdir, project_dir=workdir, use_cache=False))
    try:
        out = await runner.run(Case(id="live", input="Say hello."), workdir)
    finally:
        await runner.aclose()
    assert out.ok, out.error
    assert out.text.strip() and out.tokens_in > 0 and out.tokens_out > 0
