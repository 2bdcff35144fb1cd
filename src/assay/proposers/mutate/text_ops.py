"""Text operators (prompts, skills, docs), after GrIPS' edit operations, without a paraphrase model.

Surface: delete, swap or duplicate one phrase. Core: move one sentence (or list item) within its
paragraph; add emphasis by repeating an instruction sentence as a reminder at the end. Architecture:
swap two neighbouring paragraphs of a section, or two neighbouring sections of the same heading level.
Frontmatter, headings, code fences, tables and HTML are never edited (see ``text_split``).
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable

from assay.proposers.mutate.base import Mutation, shorten
from assay.proposers.mutate.text_split import Block, Units, phrases, sentences, split_blocks

INSTRUCTION = re.compile(
    r"\b(must|should|always|never|do not|don't|avoid|make sure|ensure|only|remember|important)\b", re.I
)
TextOp = Callable[[list[Block], random.Random], str | None]


def _paragraphs(blocks: list[Block]) -> list[int]:
    return [i for i, block in enumerate(blocks) if block.kind == "para"]


def _units(blocks: list[Block], split: Callable[[str], Units]) -> dict[int, Units]:
    return {i: split(blocks[i].text) for i in _paragraphs(blocks)}


def _address(units: dict[int, Units]) -> list[tuple[int, int]]:
    return [(b, u) for b, parts in units.items() for u, text in enumerate(parts.units) if text.strip()]


def _number(blocks: list[Block], index: int) -> int:
    return _paragraphs(blocks).index(index) + 1


def delete_phrase(blocks: list[Block], rng: random.Random) -> str | None:
    units = _units(blocks, phrases)
    found = _address(units)
    if len(found) < 2:
        return None
    b, u = rng.choice(found)
    parts = units[b]
    gone = parts.units[u]
    number = _number(blocks, b)
    if len(parts.units) == 1:
        blocks[b].text = ""
        if (
            b + 1 < len(blocks)
            and blocks[b + 1].kind == "blank"
            and (b == 0 or blocks[b - 1].kind == "blank")
        ):
            blocks[b + 1].text = ""
    else:
        parts.delete(u)
        blocks[b].text = parts.render()
    return f"deleted phrase '{shorten(gone)}' in paragraph {number}"


def swap_phrases(blocks: list[Block], rng: random.Random) -> str | None:
    units = _units(blocks, phrases)
    found = _address(units)
    if len(found) < 2:
        return None
    first = rng.choice(found)
    text_a = units[first[0]].units[first[1]]
    others = [a for a in found if units[a[0]].units[a[1]].strip() != text_a.strip()]
    if not others:
        return None
    second = rng.choice(others)
    text_b = units[second[0]].units[second[1]]
    units[first[0]].units[first[1]], units[second[0]].units[second[1]] = text_b, text_a
    for b in {first[0], second[0]}:
        blocks[b].text = units[b].render()
    return f"swapped phrases '{shorten(text_a, 32)}' and '{shorten(text_b, 32)}'"


def duplicate_phrase(blocks: list[Block], rng: random.Random) -> str | None:
    units = _units(blocks, phrases)
    found = _address(units)
    if not found:
        return None
    b, u = rng.choice(found)
    parts = units[b]
    text = parts.units[u].strip()
    parts.insert(rng.randrange(len(parts.units) + 1), text)
    blocks[b].text = parts.render()
    return f"duplicated phrase '{shorten(text)}' in paragraph {_number(blocks, b)}"


def move_sentence(blocks: list[Block], rng: random.Random) -> str | None:
    units = _units(blocks, sentences)
    found = [(b, i) for b, parts in units.items() if len(parts.units) >= 2 for i in range(len(parts.units))]
    if not found:
        return None
    b, i = rng.choice(found)
    parts = units[b]
    j = rng.choice([k for k in range(len(parts.units)) if k != i])
    moved = parts.units.pop(i)
    parts.units.insert(j, moved)
    blocks[b].text = parts.render()
    return f"moved sentence '{shorten(moved)}' from position {i + 1} to {j + 1} in paragraph {_number(blocks, b)}"


def add_reminder(blocks: list[Block], rng: random.Random) -> str | None:
    found = [
        " ".join(u.split()) for parts in _units(blocks, sentences).values() for u in parts.units if u.strip()
    ]
    if not found:
        return None
    instructions = [s for s in found if INSTRUCTION.search(s)]
    sentence = rng.choice(instructions or found)
    tail = blocks[-1]
    tail.text = tail.text.rstrip("\n") + f"\n\nReminder: {sentence}\n"
    return f"added the reminder '{shorten(sentence)}' at the end"


def swap_paragraphs(blocks: list[Block], rng: random.Random) -> str | None:
    paras = _paragraphs(blocks)
    found = [
        (a, b) for a, b in itertools.pairwise(paras)
        if all(blocks[k].kind != "heading" for k in range(a + 1, b)) and blocks[a].text.strip() != blocks[b].text.strip()
    ]  # fmt: skip
    if not found:
        return None
    a, b = rng.choice(found)
    core_a, core_b = blocks[a].text.rstrip("\r\n"), blocks[b].text.rstrip("\r\n")
    blocks[a].text = core_b + blocks[a].text[len(core_a) :]
    blocks[b].text = core_a + blocks[b].text[len(core_b) :]
    number = _number(blocks, a)
    return f"swapped paragraphs {number} and {number + 1}"


def _section_end(blocks: list[Block], start: int) -> int:
    level = blocks[start].level
    return next(
        (
            k
            for k in range(start + 1, len(blocks))
            if blocks[k].kind == "heading" and blocks[k].level <= level
        ),
        len(blocks),
    )


def _trailing_blanks(section: list[Block]) -> tuple[list[Block], list[Block]]:
    k = len(section)
    while k > 1 and section[k - 1].kind == "blank":
        k -= 1
    return section[:k], section[k:]


def swap_sections(blocks: list[Block], rng: random.Random) -> str | None:
    found = []
    for h, block in enumerate(blocks):
        if block.kind != "heading":
            continue
        end = _section_end(blocks, h)
        if end < len(blocks) and blocks[end].level == block.level:
            found.append((h, end, _section_end(blocks, end)))
    if not found:
        return None
    h, mid, end = rng.choice(found)
    first, second = blocks[h:mid], blocks[mid:end]
    if "".join(b.text for b in first).strip() == "".join(b.text for b in second).strip():
        return None
    (core_a, gap), (core_b, tail) = _trailing_blanks(first), _trailing_blanks(second)
    if not core_b[-1].text.endswith("\n"):
        core_b[-1].text += "\n"
    blocks[h:end] = core_b + gap + core_a + tail
    return f"swapped sections '{shorten(first[0].text)}' and '{shorten(second[0].text)}'"


def apply_text(name: str, op: TextOp, path: str, text: str, rng: random.Random) -> Mutation | None:
    """Run a text operator on ``text``; None when it finds nothing to change or the text stays the same."""
    ends_open = not text.endswith("\n")
    blocks = split_blocks(text + "\n" if ends_open else text)
    description = op(blocks, rng)
    if description is None:
        return None
    new_text = "".join(block.text for block in blocks)
    if ends_open and new_text.endswith("\n"):
        new_text = new_text[:-1]
    if new_text == text or not new_text.strip():
        return None
    return Mutation(path, new_text, f"text: {description}", name, (path,))
