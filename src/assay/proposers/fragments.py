"""The distinctive fragments of a secret: what of a check value gives it away even when the whole is hidden.

- a **rare word**: a word of :data:`MIN_RARE` or more letters that is not common English (``pangolin``,
  ``kestrel``; not ``polite`` or ``refund``);
- a **rare run**: two words of the secret, next to each other or with only stopwords between them (``lantern
  festival``, ``queen of hearts``), each common on its own but rare together: the geometric mean of their
  frequency ranks is :data:`RUN_RANK` or more (``velvet thunder``, ``regain access``; not ``card details`` or
  ``next step``);
- a **number**: a run of :data:`MIN_DIGITS` or more digits (``4471`` of ``ZEBRA 4471``).

Common English is :data:`english_rank`: the rank of a word (or of its stem: plurals, ``-ed``, ``-ing``,
``-ly``) in ``english_words.txt`` (about 21,700 words, most frequent first), or a fixed rank for the everyday
and technical words that list lacks (:data:`EVERYDAY`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from importlib import resources

from assay.proposers.skeleton import skeleton_text

__all__ = [
    "MIN_DIGITS",
    "MIN_RARE",
    "RUN_RANK",
    "STOPWORDS",
    "english_rank",
    "numbers",
    "rare_runs",
    "rare_words",
]

MIN_RARE = 4
MIN_DIGITS = 3
RUN_RANK = 3000
MIN_RUN_LETTERS = 3
# Two content words with at most this many stopwords between them make a run ("queen of the hearts").
RUN_GAP = 2
EVERYDAY_RANK = 3000
# Everyday, shop and computing words that the list (from an encyclopedia and novels) lacks, and the words of
# assay's own descriptions of a failure ("rubric check 2 failed"), which must never look rare.
_EVERYDAY_WORDS = """
    apologise async backend boolean charger chatbot checklist checkout compile concise config configure coupon
    css csv dataset debit debug debugger dict diff earbuds email empathetic endpoint escalate escalation
    faq formatted formatting frontend git grader headings headphones helpdesk hotline inbox invoice json
    latency livechat llm login logout markdown metric modem offline paraphrase parse parser parsing refund
    refundable regex reorder repo restock rewrite router rubric runtime serialize signup spam stderr stdin stdout
    subscribe summarise summarize summarization throughput timeout tuple unhelpful uninstall unsubscribe upload
    url username verbose voucher warranty webhook wifi yaml icontains eval faithfulness factuality relevance
    refusal classifier html sql xml schema assay proposer holdout"""
EVERYDAY = frozenset(_EVERYDAY_WORDS.split())
# Words that say nothing about a check value on their own, nor four of them in a row ("it is in the").
_STOPWORDS = """
    a an the and or but if then else of to in on at by for with from as is are was were be been being it its this
    that these those there here not no do does did have has had will would should could can may might must
    shall i you he she we they me him her us them my your our their so than too very just also only into over
    under about after before when where which who what how all any each some such more most"""
STOPWORDS = frozenset(_STOPWORDS.split())
_WORD = re.compile(r"[^\W_]+")
_NUMBER = re.compile(r"\d+")


@cache
def _ranks() -> dict[str, int]:
    text = resources.files("assay.proposers").joinpath("english_words.txt").read_text(encoding="utf-8")
    words = [line for line in text.splitlines() if line and not line.startswith("#")]
    ranks: dict[str, int] = {}
    for rank, word in enumerate(words, 1):
        ranks.setdefault(word, rank)
    for word in EVERYDAY:
        ranks[word] = min(ranks.get(word, EVERYDAY_RANK), EVERYDAY_RANK)
    return ranks


def _stems(word: str) -> Iterator[str]:
    """``word`` and the words it may be an inflection of (``giraffes``, ``stopped``, ``refunding``)."""
    yield word
    for suffix, replacements in (
        ("ies", ("y",)),
        ("es", ("", "e")),
        ("s", ("",)),
        ("ed", ("", "e")),
        ("ing", ("", "e")),
        ("ly", ("",)),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            base = word[: -len(suffix)]
            for replacement in replacements:
                yield base + replacement
            if suffix in ("ed", "ing") and len(base) >= 3 and base[-1] == base[-2]:
                yield base[:-1]  # stopped, running


def english_rank(word: str) -> int | None:
    """The frequency rank of ``word`` (folded: lower case, no accents) among common English words, 1 for the
    most frequent; ``None`` when it is not common English."""
    ranks = _ranks()
    found = [ranks[stem] for stem in _stems(word) if stem in ranks]
    return min(found) if found else None


def _words(secret: str) -> list[str]:
    """The words of ``secret``, folded (numbers and mixed tokens such as ``x9`` included)."""
    return [w for w in (skeleton_text(token) for token in _WORD.findall(secret)) if w]


def rare_words(secret: str) -> set[str]:
    """The words of ``secret`` of :data:`MIN_RARE` or more letters that are not common English."""
    return {w for w in _words(secret) if len(w) >= MIN_RARE and w.isalpha() and english_rank(w) is None}


def rare_runs(secret: str) -> set[str]:
    """The skeletons (see :mod:`assay.proposers.skeleton`) of the runs of two common content words of
    ``secret`` that are rare together (see the module docstring)."""
    words = _words(secret)
    runs: set[str] = set()
    for i, first in enumerate(words):
        if first in STOPWORDS or not _run_word(first):
            continue
        for j in range(i + 1, min(i + 2 + RUN_GAP, len(words))):
            second = words[j]
            if second not in STOPWORDS:
                if _run_word(second) and _rare_together(first, second):
                    runs.add("".join(words[i : j + 1]))
                break
    return runs


def _run_word(word: str) -> bool:
    # Not a number, nor a letter or two of code or a pattern (`\s`, `don't`, `.py`).
    return word.isalpha() and len(word) >= MIN_RUN_LETTERS


def _rare_together(first: str, second: str) -> bool:
    a, b = english_rank(first), english_rank(second)
    return a is None or b is None or a * b >= RUN_RANK * RUN_RANK


def numbers(secret: str) -> set[str]:
    """The runs of :data:`MIN_DIGITS` or more digits of ``secret`` (``4,471`` is ``4`` and ``471``: a
    separator between digits is matched as any separator is, so ``471`` is found in ``4,471``)."""
    return {d for d in map(skeleton_text, _NUMBER.findall(secret)) if len(d) >= MIN_DIGITS}
