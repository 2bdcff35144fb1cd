"""The hidden checklist's enforcement: redact every secret (check values, expected outputs, holdout cases), by
meaning rather than spelling, from every string that reaches a proposer or a judge.

Matching is on the skeleton (:mod:`assay.proposers.skeleton`: case-folded letters and digits only, escapes
decoded), so separators, spacing, case, line wrapping, quoting and JSON/Python escaping do not hide a secret:

- a secret whose skeleton has at least :data:`LONG` characters is redacted wherever its skeleton occurs, even
  inside a longer word; a shorter one only as whole words (``42`` is not redacted inside ``1420``);
- any window of :data:`WINDOW_WORDS` consecutive words of a secret (a rubric, an expected output, a hidden
  input), and any :data:`WINDOW_CHARS` consecutive skeleton characters of one, is redacted wherever it occurs
  (windows shorter than :data:`WINDOW_CHARS` only as whole words, and not when they are all common words);
- a cut-off piece (at least :data:`MIN_PARTIAL` skeleton characters) of a secret at the start or end of a text
  (output tails are cut) is redacted;
- base64, hex and URL-encoded runs are decoded (up to :data:`MAX_DEPTH` encodings on top of one another) and
  the whole run is redacted when its decoded text holds a secret in any of the forms above;
- a secret with no letters or digits at all is matched literally, as a whole token;
- its distinctive fragments (:mod:`assay.proposers.fragments`) are redacted wherever they occur: a rare word
  (as a needle like a secret of its length, and for a short one its plural too), a run of two words rare
  together, and a number of three or more digits wherever no digit stands right next to it (``4471`` in
  ``code 4471``, ``x4471`` and ``4 471``; not in ``14471``), in decoded runs too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from assay.proposers.fragments import STOPWORDS, numbers, rare_runs, rare_words
from assay.proposers.secrets import secrets_for
from assay.proposers.skeleton import REDACTED, Skeleton, decodings, printable, skeleton, skeleton_text

__all__ = ["REDACTED", "Redactor", "secrets_for"]

LONG = 6
WINDOW_WORDS = 4
WINDOW_CHARS = 24
MIN_WINDOW = LONG
MIN_PARTIAL = 8
MAX_DEPTH = 3
_PREFIX = LONG


class _Needles:
    """Skeleton strings to find: long ones (anywhere, or as whole words), indexed by their first characters,
    and short ones (whole words only), by length."""

    def __init__(self) -> None:
        self.long: dict[str, dict[str, bool]] = {}
        self.short: dict[int, set[str]] = {}
        self.numbers: set[str] = set()

    def add(self, needle: str, *, whole: bool = False) -> None:
        if len(needle) < LONG:
            self.short.setdefault(len(needle), set()).add(needle)
            return
        bucket = self.long.setdefault(needle[:_PREFIX], {})
        bucket[needle] = bucket.get(needle, True) and whole

    def find(self, sk: Skeleton) -> list[tuple[int, int]]:
        """Spans (in skeleton positions) where a needle occurs."""
        text = sk.text
        spans: list[tuple[int, int]] = []
        if self.long:
            for i in range(len(text) - _PREFIX + 1):
                bucket = self.long.get(text[i : i + _PREFIX])
                if bucket:
                    for needle, whole in bucket.items():
                        j = i + len(needle)
                        if text.startswith(needle, i) and (not whole or sk.whole(i, j)):
                            spans.append((i, j))
        if self.short:
            lengths = sorted(self.short)
            for i in range(len(text)):
                if sk.gap[i]:
                    for length in lengths:
                        j = i + length
                        if j <= len(text) and sk.gap[j] and text[i:j] in self.short[length]:
                            spans.append((i, j))
        return spans

    def find_numbers(self, sk: Skeleton) -> list[tuple[int, int]]:
        """Spans of the numbers, where no digit stands right next to them (separators between their digits
        are ignored, like any separator)."""
        text = sk.text
        spans: list[tuple[int, int]] = []
        for number in self.numbers:
            at = text.find(number)
            while at != -1:
                end = at + len(number)
                if (sk.gap[at] or not text[at - 1].isdigit()) and (sk.gap[end] or not text[end].isdigit()):
                    spans.append((at, end))
                at = text.find(number, at + 1)
        return spans


def _windows(secret: str) -> Iterable[str]:
    words = [w for w in (skeleton_text(word) for word in secret.split()) if w]
    raw = [word.lower().strip(".,;:!?\"'()[]") for word in secret.split() if skeleton_text(word)]
    for i in range(len(words) - WINDOW_WORDS + 1):
        if all(w in STOPWORDS for w in raw[i : i + WINDOW_WORDS]):
            continue
        window = "".join(words[i : i + WINDOW_WORDS])
        if len(window) >= MIN_WINDOW:
            yield window


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


class Redactor:
    """Replaces every occurrence of every secret, in every form listed in the module docstring, with
    ``[redacted]``. ``secrets`` are plain strings (see :func:`secrets_for`); ``words`` are structural names
    (a schema's property names: :func:`~assay.proposers.secrets.words_for`), replaced only where they stand
    as whole words, with no fragments, windows or cut-off pieces."""

    def __init__(self, secrets: Iterable[str], words: Iterable[str] = ()) -> None:
        cleaned = {s.strip() for s in secrets if isinstance(s, str) and s.strip() and REDACTED not in s}
        self.secrets = sorted(cleaned, key=lambda s: (-len(s), s))
        self._needles = _Needles()
        self._partials: list[str] = []
        literal: list[str] = []
        for secret in self.secrets:
            sk = skeleton_text(secret)
            if not sk:
                literal.append(secret)
                continue
            self._needles.add(sk, whole=len(sk) < LONG)
            if len(sk) > MIN_PARTIAL:
                self._partials.append(sk)
            for window in _windows(secret):
                self._needles.add(window, whole=len(window) < WINDOW_CHARS)
            for i in range(len(sk) - WINDOW_CHARS + 1):
                self._needles.add(sk[i : i + WINDOW_CHARS])
            self._add_fragments(secret)
        self.words = sorted(
            {w.strip() for w in words if isinstance(w, str) and w.strip() and REDACTED not in w}
        )
        for word in self.words:
            sk = skeleton_text(word)
            if sk:
                self._needles.add(sk, whole=True)
        self._literal = (
            re.compile(
                "|".join(rf"(?<!\S){re.escape(s)}(?!\S)" for s in sorted(literal, key=len, reverse=True))
            )
            if literal
            else None
        )

    def _add_fragments(self, secret: str) -> None:
        for word in rare_words(secret):
            self._needles.add(word, whole=len(word) < LONG)
            if len(word) < LONG:
                self._needles.add(word + "s", whole=True)
                self._needles.add(word + "es", whole=True)
        for run in rare_runs(secret):
            self._needles.add(run, whole=len(run) < LONG)
        self._needles.numbers |= numbers(secret)

    def redact(self, text: str, *, short: bool = True) -> str:
        """``text`` with every secret replaced by ``[redacted]``. ``short=False`` leaves whole-word matches of
        secrets shorter than :data:`LONG` skeleton characters alone, and numbers (for text such as numbers that
        assay wrote itself)."""
        if not text:
            return text
        spans = self._spans(text, short=short, depth=0)
        if not spans:
            return text
        out, last = [], 0
        for start, end in _merge(spans):
            out.append(text[last:start])
            out.append(REDACTED)
            last = end
        out.append(text[last:])
        return "".join(out)

    def contains_secret(self, text: str) -> bool:
        """Whether ``text`` holds a secret in any form."""
        return bool(text) and bool(self._spans(text, short=True, depth=0))

    def redact_any(self, value: Any) -> Any:
        """Redact every string inside a JSON-like value (dict keys included)."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact(str(k)): self.redact_any(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact_any(v) for v in value]
        return value

    def _spans(self, text: str, *, short: bool, depth: int) -> list[tuple[int, int]]:
        """Spans of ``text`` (original positions) to redact."""
        sk = skeleton(text)
        spans = [
            sk.span(i, j)
            for i, j in self._needles.find(sk)
            if short or j - i >= LONG or not self._is_short_only(sk.text[i:j])
        ]
        if short:
            spans += [sk.span(i, j) for i, j in self._needles.find_numbers(sk)]
        spans += self._edges(sk)
        if self._literal is not None:
            spans += [m.span() for m in self._literal.finditer(text)]
        if depth < MAX_DEPTH:
            for start, end, decoded in decodings(text):
                if self._decoded_holds_secret(decoded, depth + 1):
                    spans.append((start, end))
        return spans

    def _decoded_holds_secret(self, decoded: str, depth: int) -> bool:
        """Whether decoded text holds a secret: long needles and windows only (a short secret turns up in
        decoded noise by chance), and further encodings when the text is mostly printable."""
        sk = skeleton(decoded)
        if any(j - i >= LONG for i, j in self._needles.find(sk)) or self._edges(sk):
            return True
        if printable(decoded) and self._needles.find_numbers(sk):
            return True
        if self._literal is not None and self._literal.search(decoded):
            return True
        if depth < MAX_DEPTH and printable(decoded):
            return any(self._decoded_holds_secret(d, depth + 1) for _, _, d in decodings(decoded))
        return False

    def _is_short_only(self, found: str) -> bool:
        return found in self._needles.short.get(len(found), set())

    def _edges(self, sk: Skeleton) -> list[tuple[int, int]]:
        """A cut-off piece of a secret that starts or ends the text."""
        text = sk.text
        spans: list[tuple[int, int]] = []
        if len(text) < MIN_PARTIAL:
            return spans
        head, tail = text[:MIN_PARTIAL], text[-MIN_PARTIAL:]
        best_head = best_tail = 0
        for secret in self._partials:
            at = secret.find(head, 1)
            while at != -1:
                piece = len(secret) - at
                if piece > best_head and text.startswith(secret[at:]):
                    best_head = piece
                at = secret.find(head, at + 1)
            at = secret.find(tail, 0, len(secret) - 1)
            while at != -1:
                piece = at + MIN_PARTIAL
                if piece > best_tail and text.endswith(secret[:piece]):
                    best_tail = piece
                at = secret.find(tail, at + 1, len(secret) - 1)
        if best_head:
            spans.append(sk.span(0, best_head))
        if best_tail:
            spans.append(sk.span(len(text) - best_tail, len(text)))
        return spans
