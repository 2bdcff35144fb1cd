from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cases import load_cases
from assay.errors import ConfigError
from assay.model import CheckSpec
from tests.cases._helpers import DATA, one_line, write

ALL = [
    DATA / "native" / "cases.yaml",
    DATA / "native" / "cases.jsonl",
    DATA / "skill_creator" / "evals.json",
    DATA / "promptfoo" / "promptfooconfig.yaml",
]


def test_loads_every_format_in_order_with_sources() -> None:
    cases = load_cases(ALL)
    assert len(cases) == 3 + 2 + 3 + 8
    assert [c.id for c in cases[:5]] == ["order-status", "42", "refund-question", "greet-en", "greet-de"]
    assert [c.source for c in cases[5:8]] == [str(DATA / "skill_creator" / "evals.json")] * 3
    assert len({c.id for c in cases}) == len(cases)


def test_default_checks_are_validated_and_appended_to_every_case() -> None:
    extra = [CheckSpec(type="not_contains", value="TODO"), CheckSpec(type="latency", value=2000)]
    plain = load_cases(ALL)
    cases = load_cases(ALL, default_checks=extra)
    for before, after in zip(plain, cases, strict=True):
        assert after.checks[: len(before.checks)] == before.checks
        assert after.checks[len(before.checks) :] == extra
    cases[0].checks[-1].value = 1  # appended copies are independent
    assert cases[1].checks[-1].value == 2000 and extra[1].value == 2000


def test_bad_default_check_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as excinfo:
        load_cases(
            ALL, default_checks=[CheckSpec(type="contains", value="a"), CheckSpec(type="regex", value="(")]
        )
    one_line(excinfo, "checks[1]: regex: invalid pattern")
    with pytest.raises(ConfigError) as excinfo:
        load_cases(ALL, default_checks=[CheckSpec(type="containz")])
    one_line(excinfo, "checks[0]: unknown check type 'containz'; known: ", " contains, ")


def test_duplicate_ids_across_files_name_both(tmp_path: Path) -> None:
    first = write(tmp_path / "a.yaml", "- id: greet-en\n  input: hi\n")
    with pytest.raises(ConfigError) as excinfo:
        load_cases([first, DATA / "native" / "cases.jsonl"])
    one_line(
        excinfo,
        f"{DATA / 'native' / 'cases.jsonl'}: line 1: id:",
        "duplicate case id 'greet-en'",
        f"also in {first}: [0]",
    )
    # skill-creator's integer ids collide with native string ids once converted
    second = write(tmp_path / "b.yaml", "cases:\n  - {id: '2', input: hi}\n")
    with pytest.raises(ConfigError) as excinfo:
        load_cases([DATA / "skill_creator" / "evals.json", second])
    one_line(excinfo, f"{second}: cases[0].id: duplicate case id '2' (also in", "evals.json: evals[1])")


@pytest.mark.parametrize(
    ("name", "text", "parts"),
    [
        (
            "c.json",
            '{"cases": [\n  {"id": "a",}\n]}',
            ["invalid JSON: line 2, column 1"],  # the column and wording vary across Python versions
        ),
        ("c.yaml", "cases:\n  - id: a\n   input: [\n", ["invalid YAML: line 3"]),
        ("c.yaml", "", ["the file is empty"]),
        ("c.yaml", "runner: {}\n", ["cannot tell the format", "'evals' (skill-creator evals.json)"]),
        ("c.yaml", "just text\n", ["got a string at the top level"]),
        ("c.yaml", "[]\n", ["no cases found"]),
        ("c.jsonl", "\n\n", ["no cases found"]),
    ],
)
def test_malformed_files(tmp_path: Path, name: str, text: str, parts: list[str]) -> None:
    path = write(tmp_path / name, text)
    with pytest.raises(ConfigError) as excinfo:
        load_cases([path])
    one_line(excinfo, f"{path}: ", *parts)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    for path in (tmp_path / "nope.yaml", tmp_path / "nope.json", tmp_path / "nope.jsonl"):
        with pytest.raises(ConfigError) as excinfo:
            load_cases([path])
        one_line(excinfo, f"{path}: file not found")
    with pytest.raises(ConfigError) as excinfo:
        load_cases([tmp_path / "nope.csv"])
    one_line(excinfo, "nope.csv: file not found")


def test_list_detection_native_vs_promptfoo(tmp_path: Path) -> None:
    native = write(tmp_path / "n.yaml", "- {id: a, vars: {q: x}}\n")
    promptfoo = write(tmp_path / "p.yaml", "- {vars: {q: x}, assert: [{type: contains, value: y}]}\n")
    assert load_cases([native])[0].id == "a"
    assert load_cases([promptfoo])[0].id == "p-1"
    missing_id = write(tmp_path / "m.yaml", "- {input: x}\n")
    with pytest.raises(ConfigError) as excinfo:
        load_cases([missing_id])
    one_line(excinfo, f"{missing_id}: [0].id: required field is missing")


def test_no_paths_no_cases() -> None:
    assert load_cases([]) == []


def test_a_byte_order_mark_at_the_start_of_a_case_file_is_not_content(tmp_path: Path) -> None:
    def row(name: str) -> str:
        return json.dumps({"id": name, "input": "x", "checks": [{"type": "contains", "value": "x"}]})

    files = [
        write(tmp_path / "notepad.jsonl", f"\ufeff{row('a')}\n{row('b')}\n"),
        write(tmp_path / "excel.json", f"\ufeff[{row('c')}]"),
        write(tmp_path / "editor.yaml", "\ufeff- {id: d, input: x}\n"),
    ]
    assert [case.id for case in load_cases(files)] == ["a", "b", "c", "d"]
    inside = write(tmp_path / "inside.jsonl", f"{row('a')}\n\ufeff{row('b')}\n")
    with pytest.raises(ConfigError) as excinfo:  # only the file's first character is a mark
        load_cases([inside])
    one_line(excinfo, f"{inside}: line 2: invalid JSON")
