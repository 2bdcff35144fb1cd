"""Shared fixtures. ``llm_server``: the scripted OpenAI-/Anthropic-compatible server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.extras import need
from tests.fakes.llm_server import ScriptedLLMServer

# Markers that imply an optional extra (see tests/extras.py).
MARKER_EXTRAS = {"embed": "embed", "local_model": "local"}


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("extra"):
        for extra in marker.args:
            need(extra)
    for name, extra in MARKER_EXTRAS.items():
        if item.get_closest_marker(name) is not None:
            need(extra)


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A running ScriptedLLMServer (default reply "OK"); script it with add_rule / fail_next / default."""
    with ScriptedLLMServer() as server:
        yield server
