"""Shared fixtures. ``llm_server``: the scripted OpenAI-/Anthropic-compatible server on loopback."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from assay.sandbox import bwrap_status
from tests import hermetic, layers
from tests.extras import need, need_bwrap
from tests.fakes.llm_server import ScriptedLLMServer
from tests.layers import pytest_runtest_makereport, pytest_runtest_protocol, pytest_runtest_teardown

__all__ = [
    "pytest_runtest_makereport",
    "pytest_runtest_protocol",
    "pytest_runtest_teardown",
]  # the layers' hooks, registered here

# Markers that imply an optional extra (see tests/extras.py).
MARKER_EXTRAS = {"embed": "embed", "local_model": "local"}


def pytest_configure(config: pytest.Config) -> None:
    home = hermetic.isolate()
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))
    layers.configure(config)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    layers.check_collection(items)


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("extra"):
        for extra in marker.args:
            need(extra)
    for name, extra in MARKER_EXTRAS.items():
        if item.get_closest_marker(name) is not None:
            need(extra)
    if item.get_closest_marker("bwrap") is not None:
        need_bwrap()


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """assay as on a machine without bubblewrap (``ASSAY_BWRAP`` empty), in this process and its children."""
    monkeypatch.setenv("ASSAY_BWRAP", "")
    bwrap_status.cache_clear()
    yield
    monkeypatch.undo()
    bwrap_status.cache_clear()


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A running ScriptedLLMServer (default reply "OK"); script it with add_rule / fail_next / default."""
    with ScriptedLLMServer() as server:
        yield server
