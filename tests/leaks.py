"""An attacker's leak detector, written independently of assay's redactor: does a text reveal a secret in any
form a reader could undo — case, separators, spacing, line wrapping, JSON/Python escapes, base64, hex,
URL-encoding, one encoding on top of another — or a window of four consecutive words of it?"""

from __future__ import annotations

import base64
import binascii
import codecs
import contextlib
import re
import unicodedata
import urllib.parse
import warnings
from collections.abc import Iterable, Iterator

_B64 = re.compile(r"[A-Za-z0-9+/=_-]+(?:(?:\\n|\s)+[A-Za-z0-9+/=_-]+)*")
_HEX = re.compile(r"(?:(?:0x|\\x)?[0-9a-fA-F]{2}[\s:,-]*){4,}")


def squash(text: str) -> str:
    """Letters and digits only, case-folded, accents removed (JSON/Python escapes of line breaks dropped)."""
    text = re.sub(r"\\+[nrt]", " ", text)
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if c.isalnum() and not unicodedata.combining(c))


def _printable(data: bytes) -> str | None:
    text = data.decode("utf-8", "replace")
    ok = sum(c.isprintable() or c.isspace() for c in text)
    return text if len(text) >= 3 and ok >= 0.8 * len(text) else None


def _decoded(text: str) -> Iterator[str]:
    with_escapes = None
    with warnings.catch_warnings(), contextlib.suppress(UnicodeDecodeError, ValueError):
        warnings.simplefilter("ignore", DeprecationWarning)
        with_escapes = codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape")
    if with_escapes and with_escapes != text:
        yield with_escapes
    unquoted = urllib.parse.unquote_plus(text)
    if unquoted != text:
        yield unquoted
    for match in _B64.finditer(text):
        body = re.sub(r"\\n|\s|=", "", match.group()).replace("-", "+").replace("_", "/")
        for offset in range(4):
            chunk = body[offset:]
            chunk = (chunk[:-1] if len(chunk) % 4 == 1 else chunk) + "=" * (-len(chunk) % 4 % 3)
            if len(chunk) >= 8:
                try:
                    found = _printable(base64.b64decode(chunk))
                except (binascii.Error, ValueError):
                    continue
                if found:
                    yield found
    for match in _HEX.finditer(text):
        body = re.sub(r"0x|\\x|[^0-9a-fA-F]", "", match.group())
        for offset in (0, 1):
            chunk = body[offset:]
            chunk = chunk[: len(chunk) - len(chunk) % 2]
            if len(chunk) >= 8:
                found = _printable(bytes.fromhex(chunk))
                if found:
                    yield found


def readings(text: str, depth: int = 3) -> list[str]:
    """``text`` and everything it decodes to, up to ``depth`` encodings deep."""
    out, frontier = [text], [text]
    for _ in range(depth):
        frontier = [d for t in frontier for d in _decoded(t) if d not in out][:200]
        out += frontier
    return out


def windows(secret: str, size: int = 4) -> list[str]:
    words = secret.split()
    return [" ".join(words[i : i + size]) for i in range(len(words) - size + 1)]


def leaked(text: str, secrets: Iterable[str]) -> list[str]:
    """The secrets (or four-word windows of them) that ``text`` reveals in any form (assay's ``[redacted]``
    marker reveals nothing, whatever a secret spells)."""
    squashed = [squash(t) for t in readings(text.replace("[redacted]", " "))]
    found = []
    for secret in secrets:
        for piece in [secret, *windows(secret)]:
            key = squash(piece)
            if len(key) >= 6 and any(key in s for s in squashed):
                found.append(piece)
                break
    return found
