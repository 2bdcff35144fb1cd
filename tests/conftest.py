"""Shared fixtures. ``llm_server``: the scripted OpenAI-/Anthropic-compatible server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.llm_server import ScriptedLLMServer


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A running ScriptedLLMServer (default reply "OK"); script it with add_rule / fail_next / default."""
    with ScriptedLLMServer() as server:
        yield server
