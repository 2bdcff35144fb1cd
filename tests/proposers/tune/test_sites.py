"""Finding the tunable numbers of JSON, YAML, TOML and Python files, and writing new values back."""

from __future__ import annotations

import ast
import json
import tomllib

import yaml

from assay.proposers.tune import number_sites, write_values

PY = '''"""Docstring 3.5 is not a number."""

LIMIT = 40
RATE: float = -0.25
PORT = 8080


def score(x, items):
    # a comment 7
    first = items[0] + items[2]
    return 0.5 * x - 3 * first + 1 + f(x, seed=2)
'''


def names(path: str, text: str) -> dict[str, float]:
    return {s.name: s.value for s in number_sites(path, text) if not s.excluded}


def test_python_constants_by_name_literals_by_rank_in_their_function() -> None:
    assert names("f.py", PY) == {"f.py:LIMIT": 40, "f.py:RATE": -0.25, "f.py:score#1": 0.5, "f.py:score#2": 3}


def test_python_ports_subscripts_and_trivial_literals_are_not_tuned() -> None:
    sites = {s.name: s for s in number_sites("f.py", PY)}
    assert sites["f.py:PORT"].excluded
    assert not any(s.value in (0, 1, 2) and s.name.startswith("f.py:score") for s in sites.values())


GAINS = """def force(error, velocity, items):
    total = items[1] + 1 + 0.0
    return 1.0 * error - velocity * 1.0 + total / 1.0 + 1 * velocity + sum(map(lambda v: v + 1.0, items))
"""


def test_a_float_one_that_multiplies_is_a_gain() -> None:
    """``1.0 * error`` and ``velocity * 1.0`` are gains; an int 1, a divisor 1.0, 0.0 and a 1.0 added are not."""
    assert names("w.py", GAINS) == {"w.py:force#1": 1.0, "w.py:force#2": 1.0}
    sites = number_sites("w.py", GAINS)
    new = write_values({"w.py": GAINS}, sites, {"w.py:force#1": 12.5, "w.py:force#2": 0.25})["w.py"]
    assert "return 12.5 * error - velocity * 0.25 + total / 1.0 + 1 * velocity" in new
    assert names("w.py", new) == {"w.py:force#1": 12.5, "w.py:force#2": 0.25}


NAMED = """class Scorer:
    limit = 1
    index = 0

    def __init__(self, spare=0.0, *, floor=1, seed=0):
        self.gain = 1.0
        self.hits = 0
        self.total = 0.0

    def score(self, x):
        self.total += x
        total = 0
        for i in range(1, 5):
            total += 1
        return fit(x, alpha=0.0, version=1) + x * 1 + total
"""


def test_a_zero_or_one_a_user_named_as_a_parameter_is_tuned() -> None:
    """A class constant, a default, a float attribute and a keyword argument are parameters even at 0 or 1; a
    counter, a loop's start, an identity, an instance's int, an attribute a method adds to and a name that says index, seed or version are not."""
    assert names("s.py", NAMED) == {
        "s.py:Scorer#1": 1,
        "s.py:Scorer.__init__#1": 0.0,
        "s.py:Scorer.__init__#2": 1,
        "s.py:Scorer.__init__#3": 1.0,
        "s.py:Scorer.score#1": 5,
        "s.py:Scorer.score#2": 0.0,
    }
    sites = number_sites("s.py", NAMED)
    new = write_values({"s.py": NAMED}, sites, {"s.py:Scorer.__init__#1": 0.25, "s.py:Scorer.score#2": 0.5})
    assert "spare=0.25, *, floor=1" in new["s.py"] and "alpha=0.5, version=1" in new["s.py"]


def test_python_values_are_written_in_place_and_the_rest_kept() -> None:
    sites = number_sites("f.py", PY)
    values = {"f.py:LIMIT": 12, "f.py:RATE": 0.75, "f.py:score#1": 1.25, "f.py:score#2": -4}
    new = write_values({"f.py": PY}, sites, values)["f.py"]
    assert "LIMIT = 12\n" in new and "RATE: float = 0.75\n" in new
    assert "return 1.25 * x - (-4) * first + 1 + f(x, seed=2)" in new
    assert "# a comment 7" in new and "PORT = 8080" in new
    ast.parse(new)
    assert names("f.py", new) == {
        "f.py:LIMIT": 12,
        "f.py:RATE": 0.75,
        "f.py:score#1": 1.25,
        "f.py:score#2": -4,
    }


def test_json_yaml_and_toml_numbers_including_lists() -> None:
    doc = {"threshold": 5, "weights": [0.5, 2], "server": {"port": 80, "ratio": 0.1}, "on": True, "name": "x"}
    text = json.dumps(doc, indent=2)
    assert names("p.json", text) == {
        "p.json:threshold": 5,
        "p.json:weights[0]": 0.5,
        "p.json:weights[1]": 2,
        "p.json:server.ratio": 0.1,
    }
    assert names("p.yaml", yaml.safe_dump(doc)) == {
        k.replace(".json", ".yaml"): v for k, v in names("p.json", text).items()
    }
    toml = "threshold = 5\nweights = [0.5, 2]\n\n[server]\nport = 80\nratio = 0.1  # keep me\n"
    assert names("p.toml", toml) == {
        "p.toml:threshold": 5,
        "p.toml:weights[0]": 0.5,
        "p.toml:weights[1]": 2,
        "p.toml:server.ratio": 0.1,
    }
    new = write_values(
        {"p.toml": toml}, number_sites("p.toml", toml), {"p.toml:server.ratio": 0.3, "p.toml:weights[1]": 7}
    )
    assert "# keep me" in new["p.toml"]
    assert tomllib.loads(new["p.toml"]) == {
        "threshold": 5,
        "weights": [0.5, 7],
        "server": {"port": 80, "ratio": 0.3},
    }
    new_json = write_values({"p.json": text}, number_sites("p.json", text), {"p.json:threshold": 14})
    assert json.loads(new_json["p.json"])["threshold"] == 14


def test_files_of_other_kinds_or_that_do_not_parse_have_no_sites() -> None:
    assert number_sites("notes.md", "set it to 5") == []
    assert number_sites("f.py", "def (:") == []
    assert number_sites("p.json", "{") == []
