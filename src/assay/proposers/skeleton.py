"""Text reduced to what a secret is made of, and the encoded runs a secret may hide in.

The **skeleton** of a text keeps its letters and digits, case-folded and with accents and compatibility forms
(full-width letters, ligatures) reduced, and drops everything else — spaces, separators, line breaks, quotes,
and the escapes of JSON and Python strings (``\\n``, ``\\t``, ``\\u00e9`` decoded first). So ``ZEBRA 4471``,
``zebra_4471``, ``Z E B R A\\n4471`` and ``"ZEBRA-\\u0034471"`` share the skeleton ``zebra4471``. Each skeleton
character remembers where it came from, and whether a separator stood before it (word boundaries), so a match
in the skeleton is a span of the original text.

**Encoded runs** are stretches that may be base64 (standard or URL-safe, wrapped across line breaks), hex
(plain, ``0x``/``\\x`` prefixed, or with ``:`` ``-`` space separators) or URL-encoding; :func:`decodings` gives
their decoded text when it is mostly printable.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

REDACTED = "[redacted]"
_HEX = frozenset("0123456789abcdefABCDEF")
# Escapes in any case: a program may upper-case its JSON output ("\\N").
_SEPARATOR_ESCAPES = frozenset("nrtfvbNRTFVB0/'\"\\")
_CODE_ESCAPES = {"u": (4,), "U": (8, 4), "x": (2,), "X": (2,)}

MIN_ENCODED = 8
# A line break, or its escape in JSON or Python source (an encoded run may be wrapped).
_BREAK = r"(?:\r?\n|\r|(?:\\+r)?\\+n)"
MAX_ENCODED = 1 << 16
_B64_RUN = re.compile(rf"[A-Za-z0-9+/_-]+(?:(?:[ \t]*{_BREAK})+[ \t]*[A-Za-z0-9+/_-]+)*={{0,2}}")
_HEX_RUN = re.compile(
    rf"(?:\\+{_BREAK}?x|0x)?[0-9a-fA-F](?:[0-9a-fA-F]|[ \t:,+-]|{_BREAK}|0x|\\+{_BREAK}?x)*[0-9a-fA-F]"
)
_URL_RUN = re.compile(rf"[^\s\"'<>]+(?:{_BREAK}+[^\s\"'<>]+)*")
_NOT_B64 = re.compile(r"[^A-Za-z0-9+/]")
# The letters of a JSON or Python escape (after its backslash) that a base64 run would otherwise start with.
_ESCAPE_HEAD = re.compile(r"u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[nrtbf]")
_ESCAPED_BREAK = re.compile(r"\\+[nr]")
_HEX_BREAK = re.compile(r"\\[nr]")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")


@dataclass
class Skeleton:
    """``text`` (the skeleton), and for each of its characters the span ``[start, end)`` in the original;
    ``gap[i]`` is true when a separator (or the start or end) lies between skeleton characters ``i-1`` and
    ``i`` — ``gap`` has ``len(text) + 1`` entries."""

    text: str = ""
    start: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)
    gap: list[bool] = field(default_factory=list)

    def span(self, i: int, j: int) -> tuple[int, int]:
        """The original span of skeleton characters ``i`` up to ``j`` (exclusive)."""
        return self.start[i], self.end[j - 1]

    def whole(self, i: int, j: int) -> bool:
        """Whether skeleton characters ``i`` up to ``j`` form whole words (separators on both sides)."""
        return self.gap[i] and self.gap[j]


@lru_cache(maxsize=8192)
def _fold(char: str) -> str:
    """The letters and digits ``char`` stands for, case-folded, without accents."""
    decomposed = unicodedata.normalize("NFKD", char)
    kept = "".join(c for c in decomposed if not unicodedata.combining(c))
    return "".join(c for c in kept.casefold() if c.isalnum())


def _code_width(text: str, at: int) -> int:
    """The number of hex digits of a ``\\uXXXX`` / ``\\U…`` / ``\\xXX`` escape whose letter is at ``at``
    (0 if there is none)."""
    for width in _CODE_ESCAPES.get(text[at : at + 1], ()):
        digits = text[at + 1 : at + 1 + width]
        if len(digits) == width and all(d in _HEX for d in digits):
            return width
    return 0


def skeleton(text: str) -> Skeleton:
    """The skeleton of ``text`` (see the module docstring). ``[redacted]`` markers count as separators."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    gap: list[bool] = []
    pending_gap = True
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        begin = i
        if char == "[" and text.startswith(REDACTED, i):
            pending_gap = True
            i += len(REDACTED)
            continue
        if char == "\\":
            j = i
            while j < n and text[j] == "\\":
                j += 1
            width = _code_width(text, j)
            if width:
                code = int(text[j + 1 : j + 1 + width], 16)
                i = j + 1 + width
                folded = _fold(chr(code)) if code < 0x110000 else ""
                if not folded:
                    pending_gap = True
                for c in folded:
                    out.append(c)
                    starts.append(begin)
                    ends.append(i)
                    gap.append(pending_gap)
                    pending_gap = False
                continue
            i = j + 1 if j < n and text[j] in _SEPARATOR_ESCAPES else j
            pending_gap = True
            continue
        i += 1
        if char.isascii():
            if char.isalnum():
                out.append(char.lower())
                starts.append(begin)
                ends.append(i)
                gap.append(pending_gap)
                pending_gap = False
            else:
                pending_gap = True
            continue
        folded = _fold(char)
        if not folded:
            pending_gap = True
        for c in folded:
            out.append(c)
            starts.append(begin)
            ends.append(i)
            gap.append(pending_gap)
            pending_gap = False
    gap.append(True)
    return Skeleton("".join(out), starts, ends, gap)


def skeleton_text(text: str) -> str:
    """Just the skeleton string of ``text``."""
    return skeleton(text).text


def printable(text: str) -> bool:
    """Whether decoded ``text`` is mostly printable (worth decoding further)."""
    good = sum(1 for c in text if c.isprintable() or c in "\n\r\t")
    return good >= 0.85 * len(text)


def _b64_texts(run: str) -> Iterator[str]:
    body = _NOT_B64.sub("", _ESCAPED_BREAK.sub("", run).replace("-", "+").replace("_", "/"))
    for offset in range(4):
        chunk = body[offset:]
        if len(chunk) % 4 == 1:
            chunk = chunk[:-1]
        chunk += "=" * (-len(chunk) % 4)
        if len(chunk) < MIN_ENCODED:
            break
        try:
            yield base64.b64decode(chunk).decode("utf-8", errors="replace")
        except (binascii.Error, ValueError):
            continue


def _hex_texts(run: str) -> Iterator[str]:
    # An escaped break is one backslash and its letter: a break wrapped in between an escape's own backslash and
    # its x must leave that escape whole; taking both backslashes left a bare "x41" after "\\x30", and removing
    # "0x" then ate a digit, so every byte after it was read off by half a byte.
    body = re.sub(r"0x|\\x|[^0-9a-fA-F]", "", _HEX_BREAK.sub("", re.sub(r"[\r\n]", "", run)))
    for offset in (0, 1):
        chunk = body[offset:]
        chunk = chunk[: len(chunk) - len(chunk) % 2]
        if len(chunk) < MIN_ENCODED:
            break
        yield bytes.fromhex(chunk).decode("utf-8", errors="replace")


def decodings(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, decoded)`` for every run of ``text`` that may be base64, hex or URL-encoding (bytes that
    are not UTF-8 decode to U+FFFD, a separator)."""
    for match in _B64_RUN.finditer(text):
        runs = [(match.start(), match.group())]
        if (
            match.start()
            and text[match.start() - 1] == "\\"
            and (escape := _ESCAPE_HEAD.match(match.group()))
        ):
            # `\u201cMDAg...`: the escape's letters may not be part of the base64 that follows them
            runs.append((match.start() + escape.end(), match.group()[escape.end() :]))
        for start, run in runs:
            if MIN_ENCODED <= len(run) <= MAX_ENCODED:
                for decoded in _b64_texts(run):
                    yield start, match.end(), decoded
    for match in _HEX_RUN.finditer(text):
        if MIN_ENCODED <= len(match.group()) <= MAX_ENCODED:
            for decoded in _hex_texts(match.group()):
                yield match.start(), match.end(), decoded
    for match in _URL_RUN.finditer(text):
        run = match.group()
        if "%" in run and len(run) <= MAX_ENCODED and _PERCENT.search(run):
            decoded = urllib.parse.unquote_plus(
                _ESCAPED_BREAK.sub("", run).replace("\r", "").replace("\n", "")
            )
            yield match.start(), match.end(), decoded
