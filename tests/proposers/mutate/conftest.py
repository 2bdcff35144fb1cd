"""Fixtures of the mutate tests."""

from __future__ import annotations

import pytest

from tests.proposers.mutate.samples import BINPACK


@pytest.fixture
def binpack() -> str:
    """A FunSearch-style bin-packing ``priority(item, bins)`` module."""
    return BINPACK
