from __future__ import annotations

import gc

import pytest

from assay.gcpause import full_collections_held


def test_full_collections_are_held_and_the_thresholds_come_back() -> None:
    before = gc.get_threshold()
    with full_collections_held():
        inside = gc.get_threshold()
        assert inside[:2] == before[:2] and inside[2] > 10**6
        with full_collections_held():
            assert gc.get_threshold() == inside
        assert gc.get_threshold() == inside  # the outer block still holds them
    assert gc.get_threshold() == before


def test_thresholds_come_back_after_an_error() -> None:
    before = gc.get_threshold()
    with pytest.raises(ValueError), full_collections_held():
        raise ValueError("boom")
    assert gc.get_threshold() == before
