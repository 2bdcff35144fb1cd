from __future__ import annotations

from pathlib import Path

import pytest

from assay.cases import load_cases
from assay.errors import ConfigError
from tests.cases._helpers import DATA, one_line, write


def test_native_yaml_maps_every_field() -> None:
    cases = load_cases([DATA / "native" / "cases.yaml"])
    assert [c.id for c in cases] == ["order-status", "42", "refund-question"]
    status, numbered, refund = cases

    assert status.input == "Where is order 1182?"
    assert status.expected == "Order 1182 shipped on May 3 and arrives May 6."
    assert status.tags == ["orders", "smoke"]
    assert (status.weight, status.threshold) == (2.0, 0.8)
    assert status.source == str(DATA / "native" / "cases.yaml")
    got = [(c.type, c.value, c.negate, c.weight, c.threshold) for c in status.checks]
    assert got == [
        ("contains", "1182", False, 2.0, None),
        ("icontains", "shipped", False, 1.0, None),  # shorthand {icontains: ...}
        ("not_contains", "as an AI", False, 1.0, None),  # a registered type keeps its name
        ("regex", "(?i)sorry", True, 1.0, None),  # not- prefix negates
        ("llm_judge", "Gives a concrete delivery date", False, 1.0, 0.7),
    ]

    assert numbered.input is None and numbered.vars == {"order": "1183", "lang": "de"}
    assert [(c.type, c.value, c.negate) for c in numbered.checks] == [
        ("json_valid", None, False),
        ("regex", "^\\{", True),
    ]
    assert numbered.files == ["fixtures/order_1183.json"]
    assert refund.expected == "30" and refund.checks == []


def test_native_jsonl_one_case_per_line() -> None:
    cases = load_cases([DATA / "native" / "cases.jsonl"])
    assert [c.id for c in cases] == ["greet-en", "greet-de"]
    assert cases[0].tags == ["greeting"]
    assert [(c.type, c.value, c.negate) for c in cases[1].checks] == [
        ("icontains", "hallo", False),
        ("not_contains", "Hello", False),  # not-contains resolves to the registered not_contains
    ]
    assert cases[1].threshold == 0.5


def test_top_level_list_and_hyphenated_types(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.yaml",
        "- id: a\n  input: hi\n  checks: [{starts-with: Hi}, {not_starts_with: Bye}, {type: not-json_valid}]\n",
    )
    (case,) = load_cases([path])
    assert [(c.type, c.value, c.negate) for c in case.checks] == [
        ("starts_with", "Hi", False),
        ("starts_with", "Bye", True),
        ("json_valid", None, True),
    ]


def test_explicit_negate_and_prefix_cancel(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.yaml", "- id: a\n  input: hi\n  checks: [{type: not-regex, value: x, negate: true}]\n"
    )
    assert load_cases([path])[0].checks[0].negate is False


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("- input: hi\n", ["[0].id", "required field is missing"]),
        ("cases:\n  - id: a\n    input: [1, 2]\n", ["cases[0].input", "expected a string, got list"]),
        ("- id: a\n", ["[0].input", "give 'input' text or 'vars'"]),
        ("- id: a\n  input: hi\n  vars: [1]\n", ["[0].vars", "expected a mapping, got list"]),
        ("- id: a\n  input: hi\n  checks: {contains: x}\n", ["[0].checks", "expected a list of checks"]),
        ("- id: a/b\n  input: hi\n", ["[0].id", "invalid case id 'a/b'"]),
        ("- id: true\n  input: hi\n", ["[0].id", "expected a string or integer id, got boolean"]),
        ("- id: a\n  input: hi\n  weight: -1\n", ["[0].weight", "expected a number >= 0"]),
        ("- id: a\n  input: hi\n  threshold: 1.5\n", ["[0].threshold", "between 0 and 1"]),
        ("- id: a\n  input: hi\n  tags: [1]\n", ["[0].tags[0]", "expected a string, got number"]),
        (
            "- id: a\n  input: hi\n  checks: [{type: containz, value: x}]\n",
            ["[0].checks[0]", "unknown check type 'containz'; known: ", "contains, contains_all"],
        ),
        (
            "- id: a\n  input: hi\n  checks: [{contains: x, regex: y}]\n",
            ["[0].checks[0]", "one check type per entry, got 'contains', 'regex'"],
        ),
        (
            "- id: a\n  input: hi\n  checks: [{weight: 2}]\n",
            ["[0].checks[0].type", "required field is missing"],
        ),
        (
            "- id: a\n  input: hi\n  checks: [{type: contains, value: x, vaule: y}]\n",
            ["[0].checks[0].vaule", "unknown check field 'vaule'"],
        ),
        (
            "- id: a\n  input: hi\n  checks: [{type: regex, value: '(unclosed'}]\n",
            ["[0].checks[0]", "invalid pattern"],
        ),
        (
            "- id: a\n  input: hi\n  checks: [{type: contains}]\n",
            ["[0].checks[0]", "contains: value is required"],
        ),
        (
            "- id: a\n  input: hi\n  checks: [{type: contains, value: x, weight: -2}]\n",
            ["[0].checks[0].weight", "greater than or equal to 0"],
        ),
        (
            "- id: a\n  input: hi\n  checks: [{type: contains, value: x, negate: 'yes'}]\n",
            ["[0].checks[0].negate", "expected true or false"],
        ),
        ("cases: {id: a}\n", ["cases", "expected a list of cases, got mapping"]),
        ("cases: []\nrunner: x\n", ["runner", "unknown top-level field 'runner'"]),
    ],
)
def test_malformed_native_yaml(tmp_path: Path, text: str, parts: list[str]) -> None:
    path = write(tmp_path / "cases.yaml", text)
    with pytest.raises(ConfigError) as excinfo:
        load_cases([path])
    one_line(excinfo, str(path), *parts)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        (
            '{"id": "a", "input": "x"}\n{"id": "b", "input": }\n',
            ["line 2", "invalid JSON: column 22: Expecting value"],
        ),
        ('{"id": "a", "input": "x"}\n\n{"input": "y"}\n', ["line 3: id", "required field is missing"]),
        (
            '{"id": "a", "input": "x", "checks": [{"type": "nope"}]}\n',
            ["line 1: checks[0]", "unknown check type 'nope'"],
        ),
        ('["a"]\n', ["line 1", "expected a case"]),
    ],
)
def test_malformed_jsonl(tmp_path: Path, text: str, parts: list[str]) -> None:
    path = write(tmp_path / "cases.jsonl", text)
    with pytest.raises(ConfigError) as excinfo:
        load_cases([path])
    one_line(excinfo, f"{path}: ", *parts)


def test_identical_checks_in_one_file_share_one_spec_and_equal_values_of_other_types_do_not(
    tmp_path: Path,
) -> None:
    lines = [
        '{"id": "a", "input": "x", "checks": [{"type": "contains", "value": "ok"}, {"type": "equals", "value": 1}]}',
        '{"id": "b", "input": "y", "checks": [{"type": "contains", "value": "ok"}, {"type": "equals", "value": 1.0}]}',
        '{"id": "c", "input": "z", "checks": [{"type": "contains", "value": "ok", "weight": 2}]}',
        # a new value of a type already seen takes the shortest path (built with its case), and is shared too
        '{"id": "d", "input": "w", "checks": [{"type": "contains", "value": "new"}, {"type": "contains", "value": "ok"}]}',
        '{"id": "e", "input": "v", "checks": [{"type": "contains", "value": "new"}]}',
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n")
    a, b, c, d, e = load_cases([path], default_checks=[])
    assert a.checks[0] is b.checks[0]
    assert d.checks[0] is e.checks[0] and (d.checks[0].type, d.checks[0].value) == ("contains", "new")
    assert d.checks[1] is a.checks[0]
    assert type(a.checks[1].value) is int and type(b.checks[1].value) is float
    assert c.checks[0] is not a.checks[0] and c.checks[0].weight == 2
    assert a.checks is not b.checks


def test_jsonl_is_split_on_line_ends_only(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a", "input": "one\u2028two"}\r\n{"id": "b", "input": "x"}\n', encoding="utf-8")
    assert [(c.id, c.input) for c in load_cases([path])] == [("a", "one\u2028two"), ("b", "x")]


def test_jsonl_check_values_are_checked_on_every_line(tmp_path: Path) -> None:
    # contains is built once per file for string values (Check.text_value), but an empty one is still refused;
    # a regex is compiled for each pattern.
    good = '{"id": "%s", "input": "x", "checks": [{"type": "%s", "value": "%s"}]}'
    for kind, bad, message in (
        ("contains", "", "value must not be empty"),
        ("regex", "(", "invalid pattern"),
    ):
        rows = [good % (f"c{i}", kind, f"v{i}") for i in range(3)] + [good % ("c3", kind, bad)]
        path = write(tmp_path / f"{kind}.jsonl", "\n".join(rows) + "\n")
        with pytest.raises(ConfigError) as excinfo:
            load_cases([path])
        one_line(excinfo, f"{path}: line 4: checks[0]: ", message)


def test_jsonl_ids_are_stripped_and_checked_as_in_yaml(tmp_path: Path) -> None:
    path = write(tmp_path / "cases.jsonl", '{"id": " a ", "input": "x"}\n{"id": 7, "input": "y"}\n')
    assert [c.id for c in load_cases([path])] == ["a", "7"]
    bad = write(tmp_path / "bad.jsonl", '{"id": "a", "input": "x"}\n{"id": "../b", "input": "y"}\n')
    with pytest.raises(ConfigError) as excinfo:
        load_cases([bad])
    one_line(excinfo, f"{bad}: line 2: id: invalid case id '../b'")


def test_jsonl_rows_before_the_first_id_are_read_as_native(tmp_path: Path) -> None:
    # Rows are held until one with an id tells the format; the first row's missing id is then the error.
    path = write(tmp_path / "cases.jsonl", '{"input": "x"}\n{"id": "b", "input": "y"}\n')
    with pytest.raises(ConfigError) as excinfo:
        load_cases([path])
    one_line(excinfo, f"{path}: line 1: id: required field is missing")


def test_jsonl_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"id": "a", "input": "x"}\n{"id": "b", "input": "\xff"}\n')
    with pytest.raises(ConfigError) as excinfo:
        load_cases([path])
    one_line(excinfo, f"{path}: line 2: not UTF-8 text")
