from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.cases import load_cases
from assay.cases.loader import read_case_file
from assay.errors import ConfigError
from tests.cases._helpers import DATA, one_line, write


def test_evals_json_maps_prompts_files_and_expectations() -> None:
    path = DATA / "skill_creator" / "evals.json"
    cases = load_cases([path])
    assert [c.id for c in cases] == ["1", "2", "3"]
    report, export, totals = cases
    assert report.input is not None and report.input.startswith("Here is our Q3 sales export")
    assert report.expected is not None and report.expected.startswith("A markdown report")
    assert report.files == ["evals/files/sales_q3.csv"]
    assert report.source == str(path)
    assert [(c.type, c.value, c.negate) for c in report.checks] == [
        ("contains", "| Region |", False),
        ("regex", "Total revenue: \\$[0-9,]+", False),
        ("not_contains", "TODO", False),
        ("llm_judge", "The commentary names the region with the highest quarter-over-quarter growth", False),
        (
            "fact_coverage",
            ["EMEA grew 12%", "APAC revenue fell", "North America is the largest region"],
            False,
        ),
    ]
    assert [(c.type, c.value) for c in export.checks] == [
        ("file_exists", "report.json"),
        ("script", "python -c \"import json; data = json.load(open('report.json')); assert len(data) == 4\""),
        (
            "llm_judge",
            "The skill used the bundled scripts/export_totals.py instead of writing its own CSV parser",
        ),
    ]
    # surrounding quotes are removed from the value, the original wording stays in text
    assert [(c.type, c.value) for c in totals.checks] == [
        ("json_valid", None),
        ("contains", "EMEA"),
        ("llm_judge", "The response contains no prose before or after the JSON"),
    ]
    assert totals.files == []


def test_expectation_text_is_kept_verbatim() -> None:
    raw = json.loads((DATA / "skill_creator" / "evals.json").read_text())
    cases = load_cases([DATA / "skill_creator" / "evals.json"])
    for case, entry in zip(cases, raw["evals"], strict=True):
        assert [c.text for c in case.checks] == entry["expectations"]


def _evals(tmp_path: Path, *evals: dict[str, Any]) -> Path:
    return write(tmp_path / "cases" / "evals.json", json.dumps({"skill_name": "demo", "evals": list(evals)}))


def test_other_prefixes_and_mapping_expectations(tmp_path: Path) -> None:
    path = _evals(
        tmp_path,
        {
            "id": "string-id",
            "prompt": "p",
            "expectations": [
                "[icontains] total",
                "[not_regex] (?i)error",
                "[Starts-With] Report",
                "[llm_judge] Is concise",
                "[equals] '  padded '",
                {"type": "contains_any", "value": ["a", "b"]},
            ],
        },
    )
    (case,) = load_cases([path])
    assert case.id == "string-id"
    assert [(c.type, c.value, c.negate) for c in case.checks] == [
        ("icontains", "total", False),
        ("regex", "(?i)error", True),
        ("starts_with", "Report", False),
        ("llm_judge", "Is concise", False),
        ("equals", "  padded ", False),
        ("contains_any", ["a", "b"], False),
    ]
    assert case.checks[-1].text is None


@pytest.mark.parametrize(
    ("evals", "parts"),
    [
        (
            [
                {"id": 1, "prompt": "p"},
                {"id": 2, "prompt": "p"},
                {"id": 3, "prompt": "p", "expectations": ["[contains] a", "[containz] b"]},
            ],
            [
                "evals[2].expectations[1]",
                "unknown expectation prefix '[containz]'; known: contains, not_contains",
            ],
        ),
        (
            [{"id": 1, "prompt": "p", "expectations": ["ok", {"type": "containz", "value": "x"}]}],
            ["evals[0].expectations[1]", "unknown check type 'containz'; known: ", "contains, contains_all"],
        ),
        (
            [{"id": 1, "prompt": "p", "expectations": ["[regex] ([a-z]"]}],
            ["evals[0].expectations[0]", "invalid pattern"],
        ),
        (
            [{"id": 1, "prompt": "p", "expectations": ["[contains]   "]}],
            ["evals[0].expectations[0]", "needs a value"],
        ),
        ([{"id": 1, "prompt": "p", "expectations": ["[fact_coverage]  | "]}], ["needs at least one fact"]),
        ([{"id": 1, "prompt": "p", "expectations": [3]}], ["evals[0].expectations[0]", "expected a string"]),
        (
            [{"id": 1, "prompt": "p", "expectations": [" "]}],
            ["evals[0].expectations[0]", "empty expectation"],
        ),
        ([{"id": 1}], ["evals[0].prompt", "required field is missing"]),
        ([{"id": 1, "prompt": ["p"]}], ["evals[0].prompt", "expected a string, got list"]),
        ([{"id": 1.5, "prompt": "p"}], ["evals[0].id", "expected a string or integer id"]),
        (
            [{"id": 1, "prompt": "p"}, {"id": 1, "prompt": "q"}],
            ["evals[1].id", "duplicate case id '1'", "evals[0]"],
        ),
    ],
)
def test_malformed_evals(tmp_path: Path, evals: list[Any], parts: list[str]) -> None:
    path = _evals(tmp_path, *evals)
    with pytest.raises(ConfigError) as excinfo:
        load_cases([path])
    one_line(excinfo, f"{path}: ", *parts)


def test_evals_must_be_a_list(tmp_path: Path) -> None:
    path = write(tmp_path / "evals.json", '{"skill_name": "x", "evals": {"id": 1}}')
    with pytest.raises(ConfigError) as excinfo:
        load_cases([path])
    one_line(excinfo, f"{path}: evals: expected a list of evals, got mapping")


def test_unknown_prefix_suggests_the_near_one(tmp_path: Path) -> None:
    path = tmp_path / "evals.json"
    path.write_text('{"evals": [{"id": 1, "prompt": "p", "expectations": ["[containz] x", "[zzz] y"]}]}')
    with pytest.raises(ConfigError) as excinfo:
        load_cases([path])
    one_line(
        excinfo, "unknown expectation prefix '[containz]'; known: contains", "(did you mean [contains]?)"
    )
    path.write_text('{"evals": [{"id": 1, "prompt": "p", "expectations": ["[zzz] y"]}]}')
    with pytest.raises(ConfigError) as excinfo:
        load_cases([path])
    assert "did you mean" not in one_line(excinfo, "unknown expectation prefix '[zzz]'")


@pytest.mark.parametrize("field", ["expectations", "assertions"])
@pytest.mark.parametrize(
    ("value", "kind"), [("[contains] x", "string"), ({"a": "b"}, "mapping"), (3, "number")]
)
def test_expectations_must_be_a_list(tmp_path: Path, field: str, value: object, kind: str) -> None:
    # A string taken as one expectation would hide the author's slip (a list was meant).
    path = _evals(tmp_path, {"id": 1, "prompt": "p", field: value})
    with pytest.raises(ConfigError) as raised:
        read_case_file(path)
    message = str(raised.value)
    assert "\n" not in message
    assert f"evals[0].{field}" in message and f"expected a list of {field}, got {kind}" in message
    assert str(path) in message


def test_lenient_where_public_skills_are(tmp_path: Path) -> None:
    # Files in the wild omit ids, give numbers as expected output, a single file as a string, and
    # sometimes two input fields: all load, and what is not read is said.
    path = _evals(
        tmp_path,
        {"prompt": "p"},
        {"id": 2, "prompt": "p", "expected_output": 5},
        {"id": 3, "prompt": "p", "files": "a.pdf", "expectations": ["Names the file"]},
        {"id": 4, "prompt": "from prompt", "input": "from input", "expectations": ["x"]},
    )
    loaded = read_case_file(path)
    cases = [case for case, _ in loaded.cases]
    assert [c.id for c in cases] == ["evals-1", "2", "3", "4"]
    assert cases[1].expected == "5"
    assert (cases[2].files, [(s.type, s.value) for s in cases[2].checks]) == (
        ["a.pdf"],
        [("llm_judge", "Names the file")],
    )
    assert cases[3].input == "from prompt"
    assert any("evals[3].input" in w and "the input is `prompt`" in w for w in loaded.warnings)
