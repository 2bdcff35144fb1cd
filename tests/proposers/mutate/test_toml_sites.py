"""TOML is edited in place: one value token changes; comments, multi-line values and layout stay."""

from __future__ import annotations

import random
import tomllib

import pytest

from assay.proposers.mutate import OPERATORS
from assay.proposers.mutate.toml_sites import emit, toml_sites

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


def test_sites_skip_multiline_values_dates_and_strings_inside_strings() -> None:
    labels = [site.label for site in toml_sites(TOML)]
    assert labels == ["title", "mode", "modes", "search.temperature", "search.debug", "search.steps"]


def test_numeric_rewrites_only_the_value_token() -> None:
    for seed in range(10):
        mutation = apply("cfg.numeric", TOML, seed)
        changed = [
            (a, b) for a, b in zip(TOML.splitlines(), mutation.new_text.splitlines(), strict=True) if a != b
        ]
        [(before, after)] = changed
        assert before.split("=")[0] == after.split("=")[0]
        assert after.endswith("# sampling") or after.startswith("steps = [")
        assert tomllib.loads(mutation.new_text)["search"]["notes"] == "budget = 5\n"


def test_bool_enum_and_list_operators() -> None:
    assert tomllib.loads(apply("cfg.bool", TOML).new_text)["search"]["debug"] is False
    assert tomllib.loads(apply("cfg.enum", TOML).new_text)["mode"] == "slow"
    for seed in range(6):
        reordered = tomllib.loads(apply("cfg.list_reorder", TOML, seed).new_text)
        lists = (reordered["modes"], reordered["search"]["steps"])
        assert lists in (
            (["slow", "fast"], [1, 2, 3]),
            (["fast", "slow"], [2, 1, 3]),
            (["fast", "slow"], [1, 3, 2]),
        )
    removed = tomllib.loads(apply("cfg.list_remove", TOML, 2).new_text)
    assert len(removed["modes"]) + len(removed["search"]["steps"]) == 4
    assert "# shown in reports" in apply("cfg.list_duplicate", TOML).new_text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "true"),
        (3, "3"),
        (0.25, "0.25"),
        (float("inf"), "inf"),
        ('say "hi"', '"say \\"hi\\""'),
        ([1, "a"], '[1, "a"]'),
    ],
)
def test_emit_writes_toml_that_reads_back(value: object, text: str) -> None:
    assert emit(value) == text
    assert tomllib.loads(f"v = {text}")["v"] == value


def test_broken_toml_has_no_sites() -> None:
    assert apply("cfg.numeric", "a = [1,\n") is None
