"""Few-shot operators: reorder, swap, add or drop the examples of a prompt, drawing new ones from a pool file.

An **example** is a paragraph (blank lines around it) made only of ``Label: value`` lines, such as
``Review: ...`` / ``Sentiment: ...``; the query paragraph (it holds a ``{{placeholder}}``) is never one.
A **pool** is an artifact file whose name is ``pool.<ext>`` or ends in ``.pool.<ext>``, ``-pool.<ext>`` or
``_pool.<ext>``: examples in the same format, one per paragraph (``#`` lines are comments). The pool's labels
decide which paragraphs of the prompt are examples; without a pool, it is the label sequence that occurs
most often (at least twice) in the prompt. Pool files are read, never mutated.

Surface layer: ``fewshot.swap`` replaces one example with a pool example the prompt does not have yet;
``fewshot.reorder`` swaps two examples. Core: ``fewshot.add`` inserts a pool example; ``fewshot.drop``
removes one (never the last). These operators need the other artifact files, so besides ``apply(path,
text, rng)`` (no pool) they have ``apply_files(files, path, text, rng)``; the engine calls the latter.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from assay.proposers.mutate.base import Mutation, Operator, shorten

FIELD = re.compile(r"^([A-Za-z][\w ()/'-]{0,40}):(?:[ \t](.*))?$")
SEPARATOR = re.compile(r"(\n[ \t]*\n[\n \t]*)")
# Text files only: a code module such as ``pool.py`` or ``thread_pool.py`` is ordinary code to mutate.
POOL_NAME = re.compile(r"(^|[.\-_])pool\.(txt|md|text)$", re.I)

FileOp = Callable[[dict[str, str], str, str, random.Random], Mutation | None]


@dataclass(frozen=True)
class PoolOperator(Operator):
    """An operator that also reads other artifact files: ``apply_files(files, path, text, rng)``."""

    apply_files: FileOp = lambda files, path, text, rng: None


def is_pool(path: str) -> bool:
    """True for pool files (``pool.txt``, ``examples.pool.md``, ``sentiment-pool.txt``; text files only)."""
    return bool(POOL_NAME.search(PurePosixPath(path).name))


def _signature(paragraph: str) -> tuple[str, ...] | None:
    lines = [line for line in paragraph.strip().splitlines() if line.strip()]
    if len(lines) < 2 or "{{" in paragraph:
        return None
    fields = [FIELD.match(line.strip()) for line in lines]
    if not all(fields) or not all(f.group(2) and f.group(2).strip() for f in fields if f):
        return None
    return tuple(f.group(1).strip().casefold() for f in fields if f)


def _key(paragraph: str) -> str:
    return " ".join(paragraph.split()).casefold()


def pool_entries(files: dict[str, str]) -> list[str]:
    """Every example paragraph of every pool file (sorted by path), comments removed."""
    entries: list[str] = []
    for path in sorted(p for p in files if is_pool(p)):
        text = "\n".join(line for line in files[path].splitlines() if not line.lstrip().startswith("#"))
        entries += [p.strip() for p in SEPARATOR.split(text) if _signature(p)]
    return entries


@dataclass
class FewShot:
    """A prompt cut into chunks (paragraphs and the separators between them), its example chunk indexes
    and the pool examples it does not contain yet."""

    chunks: list[str]
    examples: list[int]
    fresh: list[str]

    @classmethod
    def parse(cls, files: dict[str, str], path: str, text: str) -> FewShot:
        chunks = SEPARATOR.split(text)
        paragraphs = range(0, len(chunks), 2)
        pool = pool_entries(files)
        signatures = Counter(_signature(e) for e in pool)
        if not signatures:
            signatures = Counter(s for i in paragraphs if (s := _signature(chunks[i])))
            signatures = Counter({s: n for s, n in signatures.items() if n >= 2})
        wanted = signatures.most_common(1)[0][0] if signatures else None
        examples = [i for i in paragraphs if wanted and _signature(chunks[i]) == wanted]
        present = {_key(chunks[i]) for i in examples}
        fresh, seen = [], set(present)
        for entry in pool:
            if _signature(entry) == wanted and _key(entry) not in seen:
                fresh.append(entry)
                seen.add(_key(entry))
        return cls(chunks, examples, fresh)

    def separator(self) -> str:
        gaps = [self.chunks[i + 1] for i in self.examples if i + 1 < len(self.chunks)]
        return Counter(gaps).most_common(1)[0][0] if gaps else "\n\n"

    def text(self) -> str:
        return "".join(self.chunks)


def has_examples(files: dict[str, str], path: str) -> bool:
    """Whether ``path`` is a prompt with at least one few-shot example (pool files never are)."""
    return not is_pool(path) and bool(FewShot.parse(files, path, files[path]).examples)


def swap(shot: FewShot, rng: random.Random) -> str | None:
    if not shot.examples or not shot.fresh:
        return None
    index, entry = rng.choice(shot.examples), rng.choice(shot.fresh)
    number = shot.examples.index(index) + 1
    old, shot.chunks[index] = shot.chunks[index], entry
    return f"replaced example {number} ('{shorten(old, 32)}') with pool example '{shorten(entry, 32)}'"


def reorder(shot: FewShot, rng: random.Random) -> str | None:
    pairs = [
        (a, b)
        for a in shot.examples
        for b in shot.examples
        if a < b and _key(shot.chunks[a]) != _key(shot.chunks[b])
    ]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    shot.chunks[a], shot.chunks[b] = shot.chunks[b], shot.chunks[a]
    return f"swapped examples {shot.examples.index(a) + 1} and {shot.examples.index(b) + 1}"


def add(shot: FewShot, rng: random.Random) -> str | None:
    if not shot.examples or not shot.fresh:
        return None
    entry, slot = rng.choice(shot.fresh), rng.randrange(len(shot.examples) + 1)
    gap = shot.separator()
    if slot < len(shot.examples):
        at = shot.examples[slot]
        shot.chunks[at:at] = [entry, gap]
    else:
        at = shot.examples[-1] + 1
        shot.chunks[at:at] = [gap, entry]
    return f"added pool example '{shorten(entry, 40)}' as example {slot + 1}"


def drop(shot: FewShot, rng: random.Random) -> str | None:
    if len(shot.examples) < 2:
        return None
    index = rng.choice(shot.examples)
    number = shot.examples.index(index) + 1
    gone = shot.chunks[index]
    # Remove the paragraph with the separator after it (before it, for the last chunk).
    span = slice(index, index + 2) if index + 1 < len(shot.chunks) else slice(index - 1, index + 1)
    del shot.chunks[span]
    return f"dropped example {number} ('{shorten(gone, 40)}')"


ShotOp = Callable[[FewShot, random.Random], str | None]
LAYERS: dict[str, tuple[int, ShotOp]] = {
    "fewshot.swap": (1, swap),
    "fewshot.reorder": (1, reorder),
    "fewshot.add": (2, add),
    "fewshot.drop": (2, drop),
}


def apply_fewshot(
    name: str, op: ShotOp, files: dict[str, str], path: str, text: str, rng: random.Random
) -> Mutation | None:
    """Run ``op`` on the examples of ``text`` (the file at ``path``) with the pools in ``files``."""
    if is_pool(path):
        return None
    shot = FewShot.parse(files, path, text)
    description = op(shot, rng)
    if description is None or shot.text() == text:
        return None
    return Mutation(path, shot.text(), f"few-shot: {description}", name, (path,))


def operator(name: str) -> PoolOperator:
    """The registered form of one few-shot operator (kind ``text``)."""
    layer, op = LAYERS[name]

    def with_files(files: dict[str, str], path: str, text: str, rng: random.Random) -> Mutation | None:
        return apply_fewshot(name, op, files, path, text, rng)

    def alone(path: str, text: str, rng: random.Random) -> Mutation | None:
        return apply_fewshot(name, op, {path: text}, path, text, rng)

    return PoolOperator(name, "text", layer, alone, "fewshot", apply_files=with_files)
