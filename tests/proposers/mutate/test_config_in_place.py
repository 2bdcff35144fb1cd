"""Every config operator and the tuner change a value's own bytes and nothing else: comments, key order, quoting,
anchors, indentation and blank lines stay as the user wrote them (issue: edits keep the user's file)."""

from __future__ import annotations

import json
import random
import tomllib

import pytest
import yaml

from assay.proposers.mutate import OPERATORS
from assay.proposers.mutate.config_ops import config_sites
from assay.proposers.tune.sites import number_sites, write_values

YAML_TEXT = """\
# Thresholds for the scorer: every line says why.
defaults: &defaults   # shared by every profile
  min_score: 0.5      # below this, reject
  max_len: 120        # characters

strict:
  <<: *defaults       # start from the defaults
  min_score: 0.8      # stricter than the default

mode: 'fast'          # fast | slow
modes: [fast, slow]   # the modes there are
verbose: True         # say more
weights:
    - 1.0   # first
    - 2.5   # second
    - 4.0   # third
stages:
  - name: coarse      # first pass
    steps: 10
  - name: fine        # second pass
    steps: 40
"""

JSON_TEXT = """{
    "threshold": 0.25,
    "name": "demo \\u00e9",
    "enabled": true,
    "sizes": [1, 2,   3],
    "nested": {
        "depth": 4,
        "tags": [
            "a",
            "b"
        ]
    }
}
"""

TOML_TEXT = """\
# Scoring settings.
title = "demo"          # shown in reports
threshold = 0.25        # how strict
mode = 'fast'           # fast or slow
modes = ["fast", "slow"]
debug = true            # extra output

[search]
steps = [ 1, 2 ,3 ]     # odd spacing, kept
limits = { low = 1, high = 9 }  # inline table
multi = [
  10,   # ten
  20,   # twenty
]

[[runs]]
seeds = 5  # first run
"""

SAMPLES = [("cfg.yaml", YAML_TEXT), ("cfg.json", JSON_TEXT), ("cfg.toml", TOML_TEXT)]
SCALAR_OPS = ["cfg.numeric", "cfg.bool", "cfg.enum"]
LIST_OPS = ["cfg.list_reorder", "cfg.list_remove", "cfg.list_duplicate"]


def parse(path: str, text: str) -> object:
    if path.endswith(".json"):
        return json.loads(text)
    if path.endswith(".toml"):
        return tomllib.loads(text)
    return yaml.safe_load(text)


def changed_region(old: str, new: str) -> tuple[str, str]:
    """The part of ``old`` that ``new`` replaced, and what replaced it (common prefix and suffix cut)."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    return old[start : len(old) - end], new[start : len(new) - end]


def comments(text: str) -> list[str]:
    return [line[line.index("#") :] for line in text.splitlines() if "#" in line]


@pytest.mark.parametrize(("path", "text"), SAMPLES)
@pytest.mark.parametrize("name", SCALAR_OPS)
def test_a_scalar_operator_changes_one_value_token(path: str, text: str, name: str) -> None:
    seen = 0
    for seed in range(30):
        mutation = OPERATORS.get(name).apply(path, text, random.Random(seed))
        if mutation is None:
            continue
        seen += 1
        before, after = changed_region(text, mutation.new_text)
        assert "\n" not in before and "#" not in before and "\n" not in after, (before, after)
        assert comments(mutation.new_text) == comments(text)
        assert parse(path, mutation.new_text) != parse(path, text)
    assert seen or (name == "cfg.enum" and path.endswith(".json"))


@pytest.mark.parametrize(("path", "text"), SAMPLES)
@pytest.mark.parametrize("name", LIST_OPS)
def test_a_list_operator_leaves_the_rest_of_the_file(path: str, text: str, name: str) -> None:
    for seed in range(20):
        mutation = OPERATORS.get(name).apply(path, text, random.Random(seed))
        assert mutation is not None
        before, after = changed_region(text, mutation.new_text)
        # Only the list's own lines change; comments outside them stay, in order.
        first = text.index(before) if before else text.index(after[:1] or "\0")
        outside = text[:first] + text[first + len(before) :]
        assert all(c in mutation.new_text for c in comments(outside))
        old, new = parse(path, text), parse(path, mutation.new_text)
        assert old != new


def test_yaml_anchors_merge_keys_quotes_and_booleans_stay() -> None:
    sites = {site.label: site for site in config_sites("yaml", YAML_TEXT)}
    assert "strict.max_len" not in sites  # shown through the merge key: edited where its anchor stands
    changed = sites["defaults.max_len"].write(150)
    assert changed == YAML_TEXT.replace("max_len: 120 ", "max_len: 150 ")
    assert yaml.safe_load(changed)["strict"]["max_len"] == 150
    assert sites["mode"].write("slow") == YAML_TEXT.replace("mode: 'fast'", "mode: 'slow'")
    assert sites["verbose"].write(False) == YAML_TEXT.replace("verbose: True", "verbose: False")
    assert sites["weights"].write([1.0, 2.5, 7.5]) == YAML_TEXT.replace("- 4.0   # third", "- 7.5   # third")
    assert sites["weights"].write([1.0, 4.0]) == YAML_TEXT.replace("    - 2.5   # second\n", "")
    assert sites["modes"].write(["fast", "slow", "slow"]) == YAML_TEXT.replace(
        "[fast, slow]", "[fast, slow, slow]"
    )


def test_json_keeps_escapes_spacing_and_indentation() -> None:
    sites = {site.label: site for site in config_sites("json", JSON_TEXT)}
    assert sites["threshold"].write(0.3) == JSON_TEXT.replace("0.25", "0.3")
    assert sites["sizes"].write([1, 5, 3]) == JSON_TEXT.replace("[1, 2,   3]", "[1, 5,   3]")
    assert sites["nested.tags"].write(["b", "a"]) == JSON_TEXT.replace(
        '"a",\n            "b"', '"b",\n            "a"'
    )
    assert sites["nested.tags"].write(["a", "b", "b"]) == JSON_TEXT.replace(
        '"b"\n        ]', '"b",\n            "b"\n        ]'
    )
    assert '"demo \\u00e9"' in sites["enabled"].write(False)


def test_crlf_files_keep_their_line_endings() -> None:
    for kind, text in (("yaml", YAML_TEXT), ("json", JSON_TEXT), ("toml", TOML_TEXT)):
        crlf = text.replace("\n", "\r\n")
        site = next(s for s in config_sites(kind, crlf) if isinstance(s.value, float))
        changed = site.write(site.value + 1)
        assert (
            changed is not None
            and changed.count("\r\n") == crlf.count("\r\n")
            and "\n" not in changed.replace("\r\n", "")
        )


@pytest.mark.parametrize(("path", "text"), SAMPLES)
def test_the_tuner_writes_only_numbers(path: str, text: str) -> None:
    sites = [s for s in number_sites(path, text) if not s.excluded]
    assert len(sites) >= 4
    values = {s.name: (s.value * 2 if isinstance(s.value, float) else s.value + 1) for s in sites}
    new = write_values({path: text}, sites, values)[path]
    assert comments(new) == comments(text)
    assert len(new.splitlines()) == len(text.splitlines())
    for old_line, new_line in zip(text.splitlines(), new.splitlines(), strict=True):
        if old_line != new_line:  # the same line but for its numbers
            strip = lambda line: "".join(c for c in line if not (c.isdigit() or c == "."))  # noqa: E731
            assert strip(old_line) == strip(new_line), (old_line, new_line)
