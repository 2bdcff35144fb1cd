"""The response cache: keys, atomic files, corrupt entries."""

from __future__ import annotations

import json
from pathlib import Path

from assay.llm.base import Completion
from assay.llm.cache import ResponseCache, cache_key

BASE = {
    "model": "openai:m",
    "base_url": "http://x/v1",
    "system": "s",
    "messages": [{"role": "user", "content": "hi"}],
    "temperature": 0.0,
    "max_tokens": 100,
    "sample": 0,
}


def test_key_changes_with_every_field() -> None:
    key = cache_key(**BASE)  # type: ignore[arg-type]
    assert key == cache_key(**BASE)  # type: ignore[arg-type]
    variants = {
        "model": "openai:n",
        "base_url": "http://y/v1",
        "system": None,
        "messages": [{"role": "user", "content": "ho"}],
        "temperature": 0.5,
        "max_tokens": 101,
        "sample": 1,
    }
    for field, value in variants.items():
        assert cache_key(**{**BASE, field: value}) != key, field  # type: ignore[arg-type]


def test_put_then_get_is_cached_and_free(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    cache.put("abc", Completion("answer", 10, 5, cost_usd=0.25, model="openai:m"))
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["abc.json"]  # no temp file left behind
    hit = cache.get("abc")
    assert hit == Completion("answer", 10, 5, cost_usd=0.0, model="openai:m", cached=True)
    assert json.loads((tmp_path / "cache" / "abc.json").read_text())["cost_usd"] == 0.25


def test_missing_or_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    assert cache.get("nope") is None
    (tmp_path / "bad.json").write_text("{truncated")
    assert cache.get("bad") is None
    (tmp_path / "wrong.json").write_text("[1, 2]")
    assert cache.get("wrong") is None
