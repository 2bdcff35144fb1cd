"""The mutation operator suite: :func:`check_operator`, which every built-in operator passes
(:data:`assay.proposers.mutate.engine.OPERATORS`) and an operator of one's own can run.

An operator is drawn on several spellings of one program (or config, or prompt): :data:`SPELLINGS` by file kind,
the same meaning written as module functions, as a class's methods, and in a denser style."""

from __future__ import annotations

import ast
import random
from collections.abc import Mapping
from pathlib import PurePosixPath

import yaml

from assay.proposers.mutate.base import Mutation, Operator
from assay.proposers.mutate.config_ops import parse_config
from assay.proposers.mutate.engine import CONFIG_FORMATS, file_kind
from assay.testing._expect import expect

SEEDS = range(12)  # draws per spelling

SPELLINGS: dict[str, dict[str, str]] = {
    "python": {
        "functions.py": (
            "LIMIT = 10\nWEIGHT = 0.5\n\n\n"
            "def score(size, load, age, spare=2.0):\n"
            "    if size > LIMIT and load > 0:\n        return -1.0\n"
            "    total = WEIGHT * size - 0.25 * load\n"
            "    if load < spare:\n        total += 1.0\n    else:\n        total -= 1.0\n"
            "    return total + size / (load or 1)\n\n\n"
            "def rank(items, load):\n    return sorted(items, key=lambda s: score(s, load, 0))\n"
        ),
        "methods.py": (
            "class Scorer:\n    limit = 10\n\n"
            "    def __init__(self, weight=0.5, spare=2.0):\n"
            "        self.weight = weight\n        self.spare = spare\n\n"
            "    def score(self, size, load, age):\n"
            "        if size > self.limit and load > 0:\n            return -1.0\n"
            "        total = self.weight * size - 0.25 * load\n"
            "        if load < self.spare:\n            total = total + 1.0\n"
            "        else:\n            total = total - 1.0\n"
            "        return total + size / (load or 1)\n\n"
            "    def rank(self, items, load):\n        return sorted(items, key=lambda s: self.score(s, load, 0))\n"
        ),
        "dense.py": (
            "def score(size, load, age, spare=2.0, limit=10):\n"
            "    bonus = 1.0 if load < spare else -1.0\n"
            "    if size > limit and load > 0:\n        return -1.0\n"
            "    return 0.5 * size - 0.25 * load + bonus + size / (load or 1)\n\n\n"
            "def rank(items, load):\n    scored = [(score(s, load, 0), s) for s in items]\n"
            "    scored.sort(reverse=True)\n    return [s for _, s in scored]\n"
        ),
    },
    "config": {
        "settings.json": '{\n  "limit": 10,\n  "weight": 0.5,\n  "strict": true,\n  "mode": "fast",\n'
        '  "modes": ["fast", "slow"],\n  "order": ["size", "load", "age"]\n}\n',
        "settings.yaml": "limit: 10\nweight: 0.5\nstrict: true\nmode: fast\nmodes: [fast, slow]\norder:\n"
        "  - size\n  - load\n  - age\n",
        "settings.toml": 'limit = 10\nweight = 0.5\nstrict = true\nmode = "fast"\nmodes = ["fast", "slow"]\n'
        'order = ["size", "load", "age"]\n',
    },
    "text": {
        "prompt.md": "# Task\n\nRead the ticket. Decide its priority. Answer with one word.\n\n"
        "# Rules\n\nA ticket about money is urgent. A ticket about style is low.\n\n"
        "Be brief, and be exact.\n",
        "prompt.txt": "TASK\n\nYou sort tickets. Read each ticket, then decide its priority, then answer in one"
        " word.\n\nRULES\n\nMoney problems are urgent; style questions are low; everything else is normal.\n\n"
        "Keep it short. Never explain.\n",
        "SKILL.md": "---\nname: triage\ndescription: Sorts tickets by priority.\n---\n\n## When\n\n"
        "Use this skill for a new ticket. Read it whole first.\n\n## How\n\n1. Money is urgent.\n"
        "2. Style is low.\n\nAnswer in one word, and never explain.\n",
    },
}


def parses(path: str, text: str) -> bool:
    """Whether ``text`` still reads as the kind of file ``path`` names (any text is a text)."""
    kind = file_kind(path, text)
    try:
        if kind == "python":
            ast.parse(text)
        elif kind == "config":
            parse_config(CONFIG_FORMATS[PurePosixPath(path).suffix.lower()], text)
    except (SyntaxError, ValueError, yaml.YAMLError, RecursionError):
        return False
    return True


def check_operator(op: Operator, spellings: Mapping[str, str] | None = None, *, least: int = 2) -> None:
    """The operator contract, over ``spellings`` (path to text; by default :data:`SPELLINGS` of the
    operator's kind): the operator changes at least ``least`` of them (it is not written for one spelling); each
    change keeps the file parseable, names its operator and the sites it touched (each starting with the
    file's path), and says what it did; the same seed gives the same change; None, not an exception, where it
    finds nothing."""
    who = f"operator {op.name!r}"
    texts = dict(spellings if spellings is not None else SPELLINGS[op.kind])
    changed = set()
    for path, text in texts.items():
        for seed in SEEDS:
            made = _applied(op, path, text, seed, who)
            if made is None or made.new_text == text:
                continue
            changed.add(path)
            where = f"{who} on {path} (seed {seed})"
            expect(made.path == path, f"{where}: changed {made.path!r}, not the file it was given")
            expect(parses(path, made.new_text), f"{where}: left a file that does not parse")
            expect(made.operator == op.name, f"{where}: names its operator {made.operator!r}")
            expect(bool(made.description.strip()), f"{where}: says nothing of what it changed")
            expect(
                bool(made.sites) and all(site.startswith(path) for site in made.sites),
                f"{where}: names no site of {path} it touched ({made.sites!r})",
            )
            again = _applied(op, path, text, seed, who)
            expect(
                again is not None and again.new_text == made.new_text,
                f"{where}: a second draw with the same seed changed something else",
            )
    expect(
        len(changed) >= min(least, len(texts)),
        f"{who}: changed {len(changed)} of {len(texts)} spellings ({sorted(changed)}); it should apply to"
        f" at least {min(least, len(texts))}",
    )


def _applied(op: Operator, path: str, text: str, seed: int, who: str) -> Mutation | None:
    try:
        return op.apply(path, text, random.Random(seed))
    except Exception as exc:
        raise AssertionError(
            f"{who} on {path} (seed {seed}) raised {type(exc).__name__}: {exc} (nothing to change is None)"
        ) from exc
