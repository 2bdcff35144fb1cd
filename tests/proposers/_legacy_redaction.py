"""The redactor assay had before redaction by meaning (commit 8d61afe), kept to show what today's one stops:
exact and case-insensitive forms, JSON- and repr-escaped, quoted, with whitespace collapsed or re-flowed, each
line of a multi-line secret, and cut-off pieces at the edges of a text. Anything that changes separators,
wraps, encodes or quotes part of a rubric gets through it."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[redacted]"
SHORT = 3
MIN_LINE = 8
MIN_PARTIAL = 8
_GAP = r"(?:\s|\\[ntr])+"


class LegacyRedactor:
    """Replaces every form of every secret with ``[redacted]``: exact and case-insensitive, JSON- and
    repr-escaped, inside quotes, with whitespace collapsed or re-flowed, each line (≥ 8 characters) of a multi-line
    secret, and a cut-off piece (≥ 8 characters) of a secret at the start or end of a text (output tails)."""

    def __init__(self, secrets: Iterable[str], words: Iterable[str] = ()) -> None:
        secrets = [*secrets, *words]
        cleaned = {s.strip() for s in secrets if isinstance(s, str) and s.strip() and REDACTED not in s}
        self.secrets = sorted(cleaned, key=lambda s: (-len(s), s))
        forms = sorted({f for s in self.secrets for f in _forms(s)}, key=lambda f: (-len(f), f))
        # A form can match only where all its words occur: cheap substring tests pick the few forms worth
        # a regex, instead of an alternation of thousands tried at every position of every text.
        self._forms = [(tuple({w.lower() for w in f.split()}), _pattern(f), len(f) < SHORT) for f in forms]
        self._partials = [s.lower() for s in self.secrets if len(s) > MIN_PARTIAL]

    def redact(self, text: str, *, short: bool = True) -> str:
        """``text`` with every secret form replaced by ``[redacted]``. ``short=False`` leaves the whole-token
        matches of very short secrets alone (for a second pass over JSON that only we wrote numbers into)."""
        if not text:
            return text
        lower = text.lower()
        for words, pattern, is_short in self._forms:  # longest first
            if (short or not is_short) and all(w in lower or not w.isascii() for w in words):
                regex = _compile(pattern)
                # Earlier replacements stay whole: a secret such as "act" must not cut into "[redacted]".
                text = REDACTED.join(regex.sub(REDACTED, piece) for piece in text.split(REDACTED))
                lower = text.lower()
        return self._trim_edges(text)

    def redact_any(self, value: Any) -> Any:
        """Redact every string inside a JSON-like value (dict keys included)."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact(str(k)): self.redact_any(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact_any(v) for v in value]
        return value

    def _trim_edges(self, text: str) -> str:
        lower = text.lower()
        head = _longest_suffix_at_start(lower, self._partials)
        if head:
            text, lower = REDACTED + text[head:], REDACTED.lower() + lower[head:]
        tail = _longest_prefix_at_end(lower, self._partials)
        if tail:
            text = text[: len(text) - tail] + REDACTED
        return text


def _forms(secret: str) -> set[str]:
    """The secret, its lines, and their escaped spellings (whitespace is matched loosely). A quoted secret
    needs no form of its own: the quotes stay around ``[redacted]``, which keeps JSON and code valid."""
    bases = {secret}
    if "\n" in secret:
        bases |= {line.strip() for line in secret.splitlines() if len(line.strip()) >= MIN_LINE}
    forms = set()
    for text in bases:
        once = json.dumps(text)[1:-1]
        forms |= {text, once, json.dumps(once)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}
        forms.add(repr(text)[1:-1])
    return {f for f in forms if f.strip()}


@functools.lru_cache(maxsize=4096)
def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _pattern(form: str) -> str:
    words = form.split()
    body = _GAP.join(re.escape(w) for w in words)
    if len(form) < SHORT:
        return rf"(?<!\w){body}(?!\w)"
    return body


def _longest_suffix_at_start(lower: str, secrets: list[str]) -> int:
    """Length of the longest piece (≥ MIN_PARTIAL) that ends some secret and starts ``lower``."""
    best = 0
    probe = lower[:MIN_PARTIAL]
    if len(probe) < MIN_PARTIAL:
        return 0
    for secret in secrets:
        at = secret.find(probe, 1)
        while at != -1:
            piece = secret[at:]
            if lower.startswith(piece) and len(piece) > best:
                best = len(piece)
            at = secret.find(probe, at + 1)
    return best


def _longest_prefix_at_end(lower: str, secrets: list[str]) -> int:
    """Length of the longest piece (≥ MIN_PARTIAL) that starts some secret and ends ``lower``."""
    best = 0
    probe = lower[-MIN_PARTIAL:]
    if len(lower) < MIN_PARTIAL or probe.endswith(REDACTED.lower()[-MIN_PARTIAL:]):
        return 0
    for secret in secrets:
        at = secret.find(probe, 0, len(secret) - 1)
        while at != -1:
            piece = secret[: at + MIN_PARTIAL]
            if lower.endswith(piece) and len(piece) > best:
                best = len(piece)
            at = secret.find(probe, at + 1, len(secret) - 1)
    return best
