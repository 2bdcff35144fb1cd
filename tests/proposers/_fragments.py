"""Planted answer keys drawn at random for each test (never fixed strings a special case could match), and an
independent detector of their distinctive fragments: a made-up word, a 3-5 digit number, and a rubric of
dictionary words holding the made-up word and a pair of uncommon words side by side."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from assay.proposers.fragments import STOPWORDS, english_rank

RNG = random.SystemRandom()
CONSONANTS = "bdfgklmnprstvz"
VOWELS = "aeiou"


@cache
def _dictionary() -> list[str]:
    text = resources.files("assay.proposers").joinpath("english_words.txt").read_text(encoding="utf-8")
    return [w for w in text.splitlines() if w and not w.startswith("#")]


def english(low: int, high: int) -> str:
    """A dictionary word of 4+ letters ranked between ``low`` and ``high`` (its stems too)."""
    words = _dictionary()
    while True:
        word = RNG.choice(words[low - 1 : high])
        rank = english_rank(word)
        if len(word) >= 4 and word not in STOPWORDS and rank is not None and low <= rank <= high:
            return word


def made_up(length: int) -> str:
    """A pronounceable word that is no English word."""
    while True:
        word = "".join(RNG.choice(CONSONANTS if i % 2 == 0 else VOWELS) for i in range(length))
        if english_rank(word) is None:
            return word


@dataclass(frozen=True)
class Key:
    """One drawn answer key: ``value`` (a contains check, ``RARE 4471``) and ``rubric`` (an llm_judge check)."""

    rare: str
    number: str
    pair: tuple[str, str]
    common: tuple[str, ...]
    value: str
    rubric: str

    @property
    def fragments(self) -> list[str]:
        return [self.rare, self.number, " ".join(self.pair)]


def draw() -> Key:
    # Six letters or more: the detector squashes the whole prompt, where a drawn four-letter word such as
    # "gese" stands by chance ("change. SEARCH"); the redactor itself hides rare words from four letters.
    rare = made_up(RNG.randint(6, 9))
    number = str(RNG.randint(100, 99_999))
    pair = (english(8_000, 20_000), english(8_000, 20_000))
    # Four distinct words: a rubric that starts and ends with the same word (8 letters or more) has that word as a
    # cut-off piece of itself at a text's edges, which the redactor rightly hides in a text that starts or ends so.
    common: tuple[str, ...] = ()
    while len(set(common)) < 4:
        common = tuple(english(1, 1_500) for _ in range(4))
    rubric = f"{common[0]} {common[1]} the {pair[0]} {pair[1]} and {common[2]} the {rare} {common[3]}"
    return Key(rare, number, pair, common, f"{rare.upper()} {number}", rubric.capitalize() + ".")


def echoes(key: Key) -> list[str]:
    """The fragments as a judge, a program or a crash might print them, each alone."""
    first, second = key.pair
    n = key.number
    return [
        f"missing {key.value} and then just {n}",
        f"it lacks the {key.rare.upper()}s",
        f"about {key.rare}, mostly",
        f"the {first.upper()}-{second.upper()} part",
        f"{first}\n{second}",
        f"code {n}; ref x{n}y; #{n}.",
        f"spaced {' '.join(n)} out",
        f"{n[:2]} {n[2:]} split",
    ]


def _squash(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def leaks(text: str, key: Key) -> list[str]:
    """The fragments of ``key`` that ``text`` shows (``[redacted]`` shows nothing)."""
    text = text.replace("[redacted]", " | ")
    squashed = _squash(text)
    found = [word for word in (key.rare, _squash(" ".join(key.pair))) if word in squashed]
    number = rf"(?<![0-9]){key.number}(?![0-9])"
    if re.search(number, text) or re.search(number, re.sub(r"(?<=[0-9])[ \t\n]+(?=[0-9])", "", text)):
        found.append(key.number)
    return found
