"""TOML is edited in place (tomlkit): one value changes; comments, multi-line values and layout stay."""

from __future__ import annotations

import random
import tomllib

from assay.proposers.mutate import OPERATORS
from assay.proposers.mutate.toml_sites import toml_sites

TOML = '''# evaluation settings
title = "demo"  # shown in reports
mode = "fast"
modes = ["fast", "slow"]

[search]
temperature = 0.7 # sampling
debug = true
steps = [1, 2, 3]
notes = """
budget = 5
"""
multi = [
  10,
  20,
]
started = 2024-01-01
'''


def apply(name: str, text: str, seed: int = 0):
    return OPERATORS.get(name).apply("pyproject.toml", text, random.Random(seed))


def test_sites_are_every_value_but_dates() -> None:
    labels = [site.label for site in toml_sites(TOML)]
    assert labels == [
        "title", "mode", "modes", "search.temperature", "search.debug", "search.steps", "search.notes", "search.multi",
    ]  # fmt: skip


def test_numeric_rewrites_only_the_value_token() -> None:
    for seed in range(10):
        mutation = apply("cfg.numeric", TOML, seed)
        changed = [
            (a, b) for a, b in zip(TOML.splitlines(), mutation.new_text.splitlines(), strict=True) if a != b
        ]
        [(before, after)] = changed
        if "=" in before:
            assert before.split("=")[0] == after.split("=")[0]
            assert after.endswith("# sampling") or after.startswith("steps = [")
        else:  # an item of the multi-line list, on its own line
            assert (
                before.strip().rstrip(",").isdigit() and after.strip().rstrip(",").replace(".", "").isdigit()
            )
        assert tomllib.loads(mutation.new_text)["search"]["notes"] == "budget = 5\n"


def test_bool_enum_and_list_operators() -> None:
    assert tomllib.loads(apply("cfg.bool", TOML).new_text)["search"]["debug"] is False
    assert tomllib.loads(apply("cfg.enum", TOML).new_text)["mode"] == "slow"
    for seed in range(6):
        reordered = tomllib.loads(apply("cfg.list_reorder", TOML, seed).new_text)
        lists = (reordered["modes"], reordered["search"]["steps"], reordered["search"]["multi"])
        assert lists in (
            (["slow", "fast"], [1, 2, 3], [10, 20]),
            (["fast", "slow"], [2, 1, 3], [10, 20]),
            (["fast", "slow"], [1, 3, 2], [10, 20]),
            (["fast", "slow"], [1, 2, 3], [20, 10]),
        )
    removed = tomllib.loads(apply("cfg.list_remove", TOML, 2).new_text)
    assert len(removed["modes"]) + len(removed["search"]["steps"]) + len(removed["search"]["multi"]) == 6
    assert "# shown in reports" in apply("cfg.list_duplicate", TOML).new_text


def test_broken_toml_has_no_sites() -> None:
    assert apply("cfg.numeric", "a = [1,\n") is None
