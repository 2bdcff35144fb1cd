"""TOML sites, edited in place: only the value token on its own line changes, comments and layout stay.

``tomllib`` reads TOML but nothing in the standard library writes it, so instead of re-emitting the file
this module finds ``key = value`` lines whose value is a scalar or a one-line list of scalars (outside
multi-line strings and arrays) and rewrites just that value with a minimal emitter.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Callable
from typing import Any

from assay.proposers.mutate.config_sites import Site

KEY_LINE = re.compile(r"^[ \t]*(?P<key>[A-Za-z0-9_\-.\"' ]+?)[ \t]*=[ \t]*")
TABLE_LINE = re.compile(r"^[ \t]*\[\[?[ \t]*(?P<name>[^\]]+?)[ \t]*\]\]?")
SCALARS = (str, int, float, bool)


def emit(value: Any) -> str:
    """TOML spelling of a scalar or a list of scalars."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(emit(item) for item in value) + "]"
    raise ValueError(f"cannot write {type(value).__name__} as TOML")


def _scan(line: str, depth: int, open_string: str | None) -> tuple[int, str | None, int]:
    """Follow brackets and strings through ``line``; return the new (depth, open multi-line string) and the
    index where a comment (or the line) ends the content."""
    i = 0
    while i < len(line):
        if open_string:
            close = line.find(open_string, i)
            if close < 0:
                return depth, open_string, len(line)
            i, open_string = close + 3, None
            continue
        char = line[i]
        if char == "#":
            return depth, None, i
        if line.startswith(('"""', "'''"), i):
            open_string, i = line[i : i + 3], i + 3
            continue
        if char == '"':
            i += 1
            while i < len(line) and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
        elif char == "'":
            i = line.find("'", i + 1)
            i = len(line) if i < 0 else i
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        i += 1
    return depth, open_string, len(line)


def _plain(value: Any) -> bool:
    return isinstance(value, SCALARS) or (
        isinstance(value, list) and all(isinstance(v, SCALARS) for v in value)
    )


def toml_sites(text: str) -> list[Site]:
    """Sites of a TOML document (raises ``tomllib.TOMLDecodeError`` when it does not parse)."""
    tomllib.loads(text)
    lines = text.splitlines(keepends=True)
    sites: list[Site] = []
    depth, open_string, table = 0, None, ""
    for index, line in enumerate(lines):
        at_top = depth == 0 and open_string is None
        header = TABLE_LINE.match(line) if at_top else None
        key_match = KEY_LINE.match(line) if at_top and not header else None
        if header:
            table = header.group("name").replace(" ", "")
        start = key_match.end() if key_match else 0
        depth, open_string, stop = _scan(line[start:] if key_match else line, depth, open_string)
        if not key_match or depth != 0 or open_string is not None:
            continue
        token = line[start : start + stop].rstrip()
        try:
            value = tomllib.loads(f"v = {token}")["v"]
        except tomllib.TOMLDecodeError:
            continue
        if not token or not _plain(value):
            continue
        key = key_match.group("key").split(".")[-1].strip().strip("\"'")
        label = f"{table}.{key_match.group('key').strip()}" if table else key_match.group("key").strip()
        sites.append(Site(label, key, table, value, _writer(lines, index, start, start + len(token))))
    return sites


def _writer(lines: list[str], index: int, start: int, end: int) -> Callable[[Any], str | None]:
    def write(new: Any) -> str | None:
        try:
            token = emit(new)
        except ValueError:
            return None
        changed = list(lines)
        changed[index] = lines[index][:start] + token + lines[index][end:]
        return "".join(changed)

    return write
