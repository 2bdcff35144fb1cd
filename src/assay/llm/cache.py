"""A disk cache of model answers: one JSON file per request key, written atomically.

Re-running an evaluation replays cached answers, so it costs nothing. Only successful answers are stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from assay.llm.base import Completion


def cache_key(
    *,
    model: str,
    base_url: str,
    system: str | None,
    messages: list[dict[str, str]],
    temperature: float,
    max_tokens: int,
    sample: int,
) -> str:
    """sha256 over everything that can change the answer (``model`` is ``provider:name``)."""
    payload = {
        "model": model,
        "base_url": base_url,
        "system": system,
        "messages": messages,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "sample": sample,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Cached completions under ``directory`` (``<key>.json``). A hit has ``cached=True`` and cost 0."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> Completion | None:
        """The cached completion, or None when absent or unreadable (a corrupt entry is a miss)."""
        try:
            data: Any = json.loads(self.path(key).read_text(encoding="utf-8"))
            return Completion(
                text=str(data["text"]),
                tokens_in=int(data.get("tokens_in", 0)),
                tokens_out=int(data.get("tokens_out", 0)),
                cost_usd=0.0,
                model=str(data.get("model", "")),
                cached=True,
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, completion: Completion) -> None:
        """Store a completion (temp file + os.replace, so readers never see half a file)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        data = {
            "text": completion.text,
            "tokens_in": completion.tokens_in,
            "tokens_out": completion.tokens_out,
            "cost_usd": completion.cost_usd,
            "model": completion.model,
        }
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{key[:12]}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, ensure_ascii=False)
            os.replace(tmp, self.path(key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
