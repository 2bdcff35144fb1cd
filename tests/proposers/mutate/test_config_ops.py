"""Config operators on JSON and YAML: numbers, booleans, enum flips and list edits; results still parse."""

from __future__ import annotations

import json
import random

import pytest
import yaml

from assay.proposers.mutate import OPERATORS

SETTINGS = {
    "mode": "fast",
    "modes": ["fast", "slow", "exact"],
    "search": {"temperature": 0.7, "debug": False, "retries": 3},
    "stages": [{"name": "draft", "model": "small"}, {"name": "review", "model": "large"}],
    "title": "demo",
}
JSON_TEXT = json.dumps(SETTINGS, indent=2) + "\n"
YAML_TEXT = "# settings\n" + yaml.safe_dump(SETTINGS, sort_keys=False)


def apply(name: str, path: str, text: str, seed: int = 0):
    return OPERATORS.get(name).apply(path, text, random.Random(seed))


def load(path: str, text: str):
    return json.loads(text) if path.endswith(".json") else yaml.safe_load(text)


def differences(old, new, where=""):
    """Paths whose values differ between two parsed documents (lists compared whole)."""
    if isinstance(old, dict) and isinstance(new, dict) and old.keys() == new.keys():
        return [d for k in old for d in differences(old[k], new[k], f"{where}.{k}".lstrip("."))]
    return [] if old == new else [where]


@pytest.mark.parametrize(("path", "text"), [("cfg.json", JSON_TEXT), ("cfg.yaml", YAML_TEXT)])
def test_numeric_changes_one_number(path: str, text: str) -> None:
    seen = set()
    for seed in range(20):
        mutation = apply("cfg.numeric", path, text, seed)
        new = load(path, mutation.new_text)
        [where] = differences(SETTINGS, new)
        seen.add(where)
        assert where in {"search.temperature", "search.retries"}
        assert mutation.description.startswith(f"{path.split('.')[1]}: changed {where} from ")
    assert seen == {"search.temperature", "search.retries"}


@pytest.mark.parametrize(("path", "text"), [("cfg.json", JSON_TEXT), ("cfg.yaml", YAML_TEXT)])
def test_bool_flips_the_only_boolean(path: str, text: str) -> None:
    mutation = apply("cfg.bool", path, text)
    assert load(path, mutation.new_text)["search"]["debug"] is True
    assert differences(SETTINGS, load(path, mutation.new_text)) == ["search.debug"]


@pytest.mark.parametrize(("path", "text"), [("cfg.json", JSON_TEXT), ("cfg.yaml", YAML_TEXT)])
def test_enum_switches_to_a_value_seen_under_the_same_key_or_in_its_list(path: str, text: str) -> None:
    results = set()
    for seed in range(40):
        new = load(path, apply("cfg.enum", path, text, seed).new_text)
        results.add((new["mode"], new["stages"][0]["model"], new["stages"][1]["model"]))
        assert new["title"] == "demo"  # no other value of a "title" anywhere: never flipped
    assert ("slow", "small", "large") in results and ("exact", "small", "large") in results
    assert ("fast", "large", "large") in results and ("fast", "small", "small") in results


def test_enum_needs_another_value() -> None:
    assert apply("cfg.enum", "c.json", '{"title": "demo", "names": ["a", "b"]}') is None


@pytest.mark.parametrize(("path", "text"), [("cfg.json", JSON_TEXT), ("cfg.yaml", YAML_TEXT)])
def test_list_reorder_swaps_neighbours(path: str, text: str) -> None:
    for seed in range(10):
        new = load(path, apply("cfg.list_reorder", path, text, seed).new_text)
        [where] = differences(SETTINGS, new)
        assert sorted(map(json.dumps, new[where])) == sorted(map(json.dumps, SETTINGS[where]))


@pytest.mark.parametrize(("path", "text"), [("cfg.json", JSON_TEXT), ("cfg.yaml", YAML_TEXT)])
def test_list_remove_and_duplicate_change_one_list_by_one_item(path: str, text: str) -> None:
    for seed in range(10):
        removed = load(path, apply("cfg.list_remove", path, text, seed).new_text)
        duplicated = load(path, apply("cfg.list_duplicate", path, text, seed).new_text)
        [where_r] = differences(SETTINGS, removed)
        [where_d] = differences(SETTINGS, duplicated)
        assert len(removed[where_r]) == len(SETTINGS[where_r]) - 1
        assert len(duplicated[where_d]) == len(SETTINGS[where_d]) + 1


def test_lists_inside_lists_and_numbers_in_lists_are_reached() -> None:
    text = '{"weights": [0.1, 0.2], "grid": [[1, 2], [3, 4]]}'
    results = {apply("cfg.numeric", "w.json", text, seed).description for seed in range(40)}
    assert any("weights[0]" in d for d in results) and any("grid[1][0]" in d for d in results)


def test_json_keeps_its_indentation_and_final_newline() -> None:
    mutation = apply("cfg.bool", "cfg.json", JSON_TEXT)
    assert mutation.new_text == JSON_TEXT.replace('"debug": false', '"debug": true')
    compact = apply("cfg.bool", "c.json", '{"a": true}')
    assert compact.new_text == '{"a": false}'


def test_unparsable_or_scalar_free_configs_give_none() -> None:
    assert apply("cfg.numeric", "bad.json", '{"a": 1,') is None
    assert apply("cfg.numeric", "bad.yaml", "a: [1, 2\nb: 3\n") is None
    assert apply("cfg.bool", "c.yaml", "a: 1\n") is None
    assert apply("cfg.list_remove", "c.yaml", "a: [1]\n") is None
