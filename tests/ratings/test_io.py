from __future__ import annotations

import pytest

from assay.errors import ConfigError
from assay.ratings import MatchOutcome
from assay.ratings.io import filter_category, read_outcomes


def test_csv_with_ties_categories_and_weights(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("a,b,winner,category,weight\nx,y,x,code,2\nx,y,tie,,\ny,z,,prose,0.5\nz,x,Z ,code,\n")
    with pytest.raises(ConfigError, match=r"r.csv: line 5: winner 'Z' is neither"):
        read_outcomes(path)
    path.write_text("a,b,winner,category,weight\nx,y,x,code,2\nx,y,tie,,\ny,z,,prose,0.5\nz,x,z,code,\n")
    outcomes = read_outcomes(path)
    assert outcomes == [
        MatchOutcome("x", "y", "x", "code", 2.0),
        MatchOutcome("x", "y", None),
        MatchOutcome("y", "z", None, "prose", 0.5),
        MatchOutcome("z", "x", "z", "code"),
    ]
    assert [o.winner for o in filter_category(outcomes, "code")] == ["x", "z"]
    assert filter_category(outcomes, None) == outcomes


def test_csv_minimal_header(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("a,b,winner\np,q,q\n")
    assert read_outcomes(path) == [MatchOutcome("p", "q", "q")]


def test_jsonl(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"a": "p", "b": "q", "winner": "p", "weight": 3}\n\n{"a": "p", "b": "q", "winner": null}\n'
    )
    assert read_outcomes(path) == [MatchOutcome("p", "q", "p", weight=3.0), MatchOutcome("p", "q", None)]


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        ("r.csv", "a,b\np,q\n", r"r.csv: line 1: header lacks winner"),
        ("r.csv", "a,b,winner\np,q,p\np,q\n", r"r.csv: line 3: expected 3 columns"),
        ("r.csv", "a,b,winner\np,q,p,extra\n", r"r.csv: line 2: expected 3 columns"),
        ("r.csv", "a,b,winner,weight\np,q,p,heavy\n", r"r.csv: line 2: weight 'heavy' is not a number"),
        ("r.csv", "a,b,winner,weight\np,q,p,-1\n", r"r.csv: line 2: weight must be a positive number"),
        ("r.csv", "a,b,winner\np,p,p\n", r"r.csv: line 2: a and b are the same"),
        ("r.jsonl", '{"a": "p", "b": "q", "winner": "p"}\n{"a": "p"\n', r"r.jsonl: line 2: invalid JSON"),
        ("r.jsonl", "[1, 2]\n", r"r.jsonl: line 1: expected a JSON object"),
        ("r.jsonl", '{"a": "p", "b": "q"}\n', r"r.jsonl: line 1: missing winner"),
        ("r.jsonl", '{"a": ["p"], "b": "q", "winner": "q"}\n', r"r.jsonl: line 1: a must be a name"),
        ("r.txt", "a,b,winner\n", r"r.txt: unknown format '.txt'"),
    ],
)
def test_malformed_input_names_file_and_line(tmp_path, name, text, error):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError, match=error) as info:
        read_outcomes(path)
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match=r"nope\.csv: no such file"):
        read_outcomes(tmp_path / "nope.csv")
