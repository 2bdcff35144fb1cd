"""benchmarks/tasks/parameters.py: the numbers a family declares for Optuna alone, read and written by name."""

from __future__ import annotations

import json
import tomllib

import pytest

from tests.benchmarks.offline_modules import parameters

SOURCE = '''"""A module a user wrote."""

LIMIT = 1.0  # the limit
WEIGHTS = {"refund": 0.0, "late": -2}
STEPS: list[int] = [3, 4]
MODE = "fast"


class Cache:
    DECAY = 0.5

    def __init__(self, capacity, frequency=0.0, *, decay=1.0):
        self.capacity = capacity


def place(points, k, pull=0.25):
    return LIMIT * 1.0
'''


def test_each_spelling_of_a_python_number_is_read_and_written_in_place() -> None:
    values = {
        "LIMIT": 2.5,
        "WEIGHTS['refund']": -0.75,
        "WEIGHTS['late']": 7,
        "STEPS[1]": 9,
        "MODE": "slow",
        "Cache.DECAY": 0.125,
        "Cache.__init__(frequency)": 40.0,
        "Cache.__init__(decay)": 0.9,
        "place(pull)": 1e-05,
    }
    assert [parameters.read("m.py", SOURCE, name) for name in values] == [
        1.0, 0.0, -2, 4, "fast", 0.5, 0.0, 1.0, 0.25,
    ]  # fmt: skip
    written = parameters.write("m.py", SOURCE, values)
    assert {name: parameters.read("m.py", written, name) for name in values} == values
    assert "LIMIT = 2.5  # the limit\n" in written and "return LIMIT * 1.0\n" in written
    assert 'WEIGHTS = {"refund": -0.75, "late": 7}' in written
    assert written.count("\n") == SOURCE.count("\n")
    compile(written, "m.py", "exec")


@pytest.mark.parametrize("name", ["LIMITS", "WEIGHTS['lost']", "STEPS[5]", "Cache.SIZE", "place(k)", "x y"])
def test_a_name_that_is_not_there_is_a_key_error(name: str) -> None:
    with pytest.raises(KeyError):
        parameters.read("m.py", SOURCE, name)
    with pytest.raises(KeyError):
        parameters.write("m.py", SOURCE, {name: 1.0})


def test_config_numbers_are_dotted_paths_and_toml_keeps_its_comments() -> None:
    toml = "# policy\n[reorder]\ncover = 1.0   # days\n\n[order]\ncover = 3\nround_to = 1\n"
    written = parameters.write("p.toml", toml, {"order.cover": 5, "reorder.cover": 0.5})
    assert written == "# policy\n[reorder]\ncover = 0.5   # days\n\n[order]\ncover = 5\nround_to = 1\n"
    assert tomllib.loads(written) == {"reorder": {"cover": 0.5}, "order": {"cover": 5, "round_to": 1}}
    assert parameters.read("p.toml", written, "order.round_to") == 1
    document = '{"target": 1.0, "up": {"step": 1}}'
    assert json.loads(parameters.write("a.json", document, {"up.step": 4})) == {
        "target": 1.0,
        "up": {"step": 4},
    }
    for kind, text in (("p.toml", toml), ("a.json", document)):
        with pytest.raises(KeyError):
            parameters.write(kind, text, {"up.missing": 1})
