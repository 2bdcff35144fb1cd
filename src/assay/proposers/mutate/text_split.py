"""Splitting a text or markdown document into blocks, and a paragraph into phrases or sentences.

Blocks keep the text exactly (joining them gives the document back). Frontmatter (between leading ``---``
lines, as in a SKILL.md), fenced code, headings, tables, HTML, indented code and rules are never edited;
only ``para`` blocks are. Inside a paragraph, phrases end at ``, ; :``, sentences at ``. ! ?`` and at list
items; boundaries inside inline code and links are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})(?:[ \t]|$)")
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
RULE = re.compile(r"^[ \t]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
RAW_START = re.compile(r"^(?:[ \t]*[|<]|    |\t)")
MARKER = re.compile(r"^[ \t]*(?:(?:[-*+]|\d+[.)]|>)[ \t]+)?")
BOUNDARY = re.compile(
    r"(?P<item>[ \t]*\n[ \t]*(?:[-*+]|\d+[.)]|>)[ \t]+)|(?<=[.!?])(?P<sentence>\s+)|(?<=[,;:])(?P<phrase>\s+)"
)
PROTECTED = re.compile(r"`[^`]*`|\[[^\]]*\]\([^)]*\)")


@dataclass
class Block:
    """A run of lines: ``frontmatter``, ``fence``, ``heading`` (with its ``level``), ``blank``, ``raw`` or
    ``para``."""

    kind: str
    text: str
    level: int = 0


def split_blocks(text: str) -> list[Block]:
    """The document as blocks; ``"".join(b.text for b in blocks) == text``."""
    lines = text.splitlines(keepends=True)
    blocks: list[Block] = []
    i = 0
    if lines and lines[0].strip() == "---":
        close = next((j for j in range(1, len(lines)) if lines[j].strip() in ("---", "...")), None)
        if close is not None:
            blocks.append(Block("frontmatter", "".join(lines[: close + 1])))
            i = close + 1
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            mark = fence.group(1)
            j = next(
                (k for k in range(i + 1, len(lines)) if lines[k].strip().startswith(mark)), len(lines) - 1
            )
            blocks.append(Block("fence", "".join(lines[i : j + 1])))
            i = j + 1
            continue
        heading = HEADING.match(line)
        if heading:
            blocks.append(Block("heading", line, len(heading.group(1))))
        elif not line.strip():
            _extend(blocks, "blank", line)
        elif RULE.match(line) or RAW_START.match(line):
            _extend(blocks, "raw", line)
        else:
            _extend(blocks, "para", line)
        i += 1
    return blocks


def _extend(blocks: list[Block], kind: str, line: str) -> None:
    if blocks and blocks[-1].kind == kind:
        blocks[-1].text += line
    else:
        blocks.append(Block(kind, line))


@dataclass
class Units:
    """A paragraph as ``prefix + unit0 + sep0 + unit1 + sep1 + ... + suffix``; ``ends[i]`` says what kind of
    boundary follows unit i (``phrase``, ``sentence``, ``item`` or ``end``)."""

    prefix: str
    units: list[str]
    seps: list[str]
    ends: list[str]
    suffix: str = ""

    def render(self) -> str:
        return self.prefix + "".join(u + s for u, s in zip(self.units, self.seps, strict=True)) + self.suffix

    def delete(self, i: int) -> None:
        """Remove unit i and the weaker of the separators around it (a sentence or item break survives)."""
        del self.units[i]
        last = len(self.seps) - 1
        keep_after = i > 0 and (i == last or (self.ends[i] != "phrase" and self.ends[i - 1] == "phrase"))
        gone = i - 1 if keep_after else i
        del self.seps[gone]
        del self.ends[gone]

    def insert(self, i: int, text: str) -> None:
        """Put ``text`` before unit i (after the last unit for ``i == len(units)``)."""
        if i == len(self.units) and self.units:
            self.seps[-1], self.ends[-1] = " ", "phrase"
            self.units.append(text)
            self.seps.append("")
            self.ends.append("end")
        else:
            self.units.insert(i, text)
            self.seps.insert(i, " ")
            self.ends.insert(i, "phrase")


def phrases(text: str) -> Units:
    """A paragraph split into phrases."""
    prefix = MARKER.match(text).group()  # type: ignore[union-attr]
    body = text[len(prefix) :]
    stripped = body.rstrip()
    suffix, body = body[len(stripped) :], stripped
    protected = [m.span() for m in PROTECTED.finditer(body)]
    units: list[str] = []
    seps: list[str] = []
    ends: list[str] = []
    last = 0
    for match in BOUNDARY.finditer(body):
        if any(a < match.start() < b for a, b in protected):
            continue
        units.append(body[last : match.start()])
        seps.append(match.group())
        ends.append(match.lastgroup or "phrase")
        last = match.end()
    return Units(prefix, [*units, body[last:]], [*seps, ""], [*ends, "end"], suffix)


def sentences(text: str) -> Units:
    """A paragraph split into sentences (and list items)."""
    parts = phrases(text)
    merged = Units(parts.prefix, [], [], [], parts.suffix)
    current = ""
    for unit, sep, end in zip(parts.units, parts.seps, parts.ends, strict=True):
        if end == "phrase":
            current += unit + sep
            continue
        merged.units.append(current + unit)
        merged.seps.append(sep)
        merged.ends.append(end)
        current = ""
    return merged
