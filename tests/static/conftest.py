"""Fixtures of the static tests."""

from __future__ import annotations

import pytest

from tests.static.fakes import FakeSecrets


@pytest.fixture
def fake() -> FakeSecrets:
    return FakeSecrets()
