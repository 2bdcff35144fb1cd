from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from assay.cases import load_cases
from assay.errors import ConfigError
from assay.model import Case
from tests.cases._helpers import DATA, one_line, write

CONFIG = DATA / "promptfoo" / "promptfooconfig.yaml"
DEFAULT_CHECKS = [
    ("icontains", "as an ai language model", True, 1.0, None),
    ("latency", 5000.0, False, 1.0, None),
]


def _checks(case: Case) -> list[tuple[Any, ...]]:
    return [(c.type, c.value, c.negate, c.weight, c.threshold) for c in case.checks]


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return {c.id: c for c in load_cases([CONFIG])}


def test_ids_follow_descriptions_or_file_positions(cases: dict[str, Case]) -> None:
    assert list(cases) == [
        "return-window-for-headphones",  # unique description, slugged
        "promptfooconfig-2",  # no description: <file-stem>-<n>
        "billing-1",  # "Charge dispute" twice: not unique, so positions
        "billing-2",
        "invoice-copy-pdf",
        "edge_cases-1",
        "parcel-tracking",  # CSV __description
        "smoke-2",
    ]


def test_inline_tests_merge_default_test(cases: dict[str, Case]) -> None:
    first = cases["return-window-for-headphones"]
    assert first.source == str(CONFIG)
    assert first.input is None
    assert first.vars == {
        "company": "Acme Inc.",
        "tone": "friendly",
        "question": "Can I still return my headphones? I bought them two weeks ago.",
        # file:// var values are read from the file, relative to the config, and trimmed (as promptfoo does)
        "policy": "Items can be returned within 30 days of delivery with the receipt.",
    }
    assert first.threshold == 0.75
    assert _checks(first) == [
        *DEFAULT_CHECKS,
        ("icontains", "30 days", False, 1.0, None),
        (
            "llm_judge",
            "Explains the return window politely and tells the customer how to start a return",
            False,
            2.0,
            0.7,
        ),
    ]
    second = cases["promptfooconfig-2"]
    assert second.vars["company"] == "Acme Retail"  # the test's vars override defaultTest's
    assert second.threshold is None
    assert _checks(second)[2:] == [
        ("contains_any", ["10am", "10:00"], False, 1.0, None),
        ("contains", "I don't know", True, 0.5, None),
    ]


def test_tests_from_yaml_glob(cases: dict[str, Case]) -> None:
    dispute = cases["billing-1"]
    assert dispute.source == str(DATA / "promptfoo" / "tests" / "billing.yaml")
    assert dispute.vars["question"] == "I was charged twice for order 1182."
    assert _checks(dispute) == [
        *DEFAULT_CHECKS,
        ("starts_with", "Sorry", False, 1.0, None),
        ("regex", "order\\s+#?1182", False, 1.0, None),
        ("factuality", "Duplicate charges are refunded within 5 business days", False, 1.0, None),
    ]
    assert _checks(cases["billing-2"])[2:] == [
        ("similar", "That charge is your monthly Acme Plus subscription.", False, 1.0, 0.8),
        ("cost", 0.002, False, 1.0, None),  # the cost threshold is the limit
    ]
    invoice = cases["invoice-copy-pdf"]
    assert invoice.threshold == 0.5
    assert _checks(invoice)[2:] == [
        ("json_schema", {"type": "object", "required": ["invoice_id", "total"]}, False, 1.0, None),
        ("python", "'invoice_id' in output", False, 1.0, None),
    ]


def test_tests_from_json_and_csv(cases: dict[str, Case]) -> None:
    edge = cases["edge_cases-1"]
    assert edge.vars == {"company": "Acme Inc.", "tone": "friendly", "input": "asdfghjkl"}
    assert edge.input is None  # vars are more than {input}: runners render the vars
    assert _checks(edge)[2:] == [
        ("regex", "(?i)traceback|error", True, 1.0, None),
        ("json_valid", None, False, 1.0, None),
    ]
    parcel = cases["parcel-tracking"]
    assert parcel.source == str(DATA / "promptfoo" / "tests" / "smoke.csv")
    assert parcel.vars["question"] == "Where is my parcel?"
    assert _checks(parcel)[2:] == [
        ("icontains", "tracking", False, 1.0, None),
        ("contains", "sorry", True, 1.0, None),
    ]
    assert _checks(cases["smoke-2"])[2:] == [
        ("contains_any", ["yes", "we ship"], False, 1.0, None),
        ("llm_judge", "Answers whether Acme ships to Canada", False, 1.0, None),
    ]


def test_standalone_tests_file_sets_input_when_vars_are_only_input() -> None:
    (case,) = load_cases([DATA / "promptfoo" / "tests" / "edge_cases.json"])
    assert case.id == "edge_cases-1"
    assert case.input == "asdfghjkl" and case.vars == {"input": "asdfghjkl"}
    billing = load_cases([DATA / "promptfoo" / "tests" / "billing.yaml"])
    assert [c.id for c in billing] == ["billing-1", "billing-2", "invoice-copy-pdf"]
    assert all(c.input is None for c in billing)
    assert [c.type for c in billing[0].checks] == ["starts_with", "regex", "factuality"]


def test_tests_as_single_file_ref_and_default_test_file(tmp_path: Path) -> None:
    write(
        tmp_path / "default.yaml",
        "vars: {lang: fr}\nassert: [{type: not-contains, value: Hello}]\nthreshold: 0.6\n",
    )
    write(tmp_path / "t.json", '[{"description": "Bonjour!", "vars": {"name": "Ana"}}]')
    config = write(tmp_path / "pf.yaml", "defaultTest: file://default.yaml\ntests: file://t.json\n")
    (case,) = load_cases([config])
    assert case.id == "bonjour"
    assert case.vars == {"lang": "fr", "name": "Ana"}
    assert case.threshold == 0.6
    assert _checks(case) == [("contains", "Hello", True, 1.0, None)]


@pytest.mark.parametrize(
    ("config", "parts"),
    [
        (
            "tests:\n  - assert: [{type: contains, value: a}, {type: levenshtain, value: b}]\n",
            ["tests[0].assert[1].type", "unknown promptfoo assertion type 'levenshtain'; known: "],
        ),
        (
            "tests:\n  - assert: [{type: assert-set, assert: []}]\n",
            ["tests[0].assert[0].assert", "an assert-set needs a list of assertions"],
        ),
        (
            "tests:\n  - assert: [{type: equals, value: a, transform: 3}]\n",
            ["tests[0].assert[0].transform", "expected code or a file:// path, got number"],
        ),
        ("tests:\n  - assert: [{value: a}]\n", ["tests[0].assert[0].type", "required field is missing"]),
        ("tests:\n  - assert: [{type: latency}]\n", ["tests[0].assert[0].threshold", "needs a threshold"]),
        ("tests:\n  - assert: [{type: regex, value: '(x'}]\n", ["tests[0].assert[0]", "invalid pattern"]),
        (
            "tests:\n  - assert: [{type: similar, value: a, threshold: 2}]\n",
            ["tests[0].assert[0].threshold", "less than or equal to 1"],
        ),
        ("tests:\n  - vars: {a: 1}\n    threshold: 3\n", ["tests[0].threshold", "between 0 and 1"]),
        ("tests:\n  - vars: [1]\n", ["tests[0].vars", "expected a mapping of vars"]),
        ("tests:\n  - vars: {a: 1}\n    description: [x]\n", ["tests[0].description", "expected a string"]),
        ("tests: {vars: {}}\n", ["tests", "a list of tests or a file:// path"]),
        ("tests:\n  - file://missing.yaml\n", ["missing.yaml: file not found"]),
        ("tests:\n  - file://nothing/*.yaml\n", ["tests[0]", "no file matches 'file://nothing/*.yaml'"]),
        (
            "defaultTest: {assert: [{type: javascript}]}\ntests: [{vars: {a: 1}}]\n",
            ["defaultTest.assert[0]", "javascript: value is required"],
        ),
        ("defaultTest: [1]\ntests: [{vars: {a: 1}}]\n", ["defaultTest", "expected a test (a mapping"]),
        ("tests:\n  - vars: {doc: 'file://nope.txt'}\n", ["nope.txt: file not found"]),
    ],
)
def test_malformed_promptfoo_config(tmp_path: Path, config: str, parts: list[str]) -> None:
    path = write(tmp_path / "promptfooconfig.yaml", config)
    with pytest.raises(ConfigError) as excinfo:
        load_cases([path])
    one_line(excinfo, str(tmp_path), *parts)


def test_absolute_glob(tmp_path: Path) -> None:
    write(tmp_path / "t" / "a.yaml", "- {description: A, vars: {q: a}}\n")
    write(tmp_path / "t" / "b.yaml", "- {description: B, vars: {q: b}}\n")
    config = write(tmp_path / "elsewhere" / "pf.yaml", f"tests: file://{tmp_path}/t/*.yaml\n")
    assert [c.id for c in load_cases([config])] == ["a", "b"]


def test_error_in_referenced_file_names_that_file(tmp_path: Path) -> None:
    bad = write(tmp_path / "tests" / "more.yaml", "- vars: {a: 1}\n- assert: [{type: not-javascript}]\n")
    config = write(tmp_path / "pf.yaml", "tests: file://tests/more.yaml\n")
    with pytest.raises(ConfigError) as excinfo:
        load_cases([config])
    one_line(excinfo, f"{bad}: [1].assert[0]: javascript: value is required")


def test_csv_errors_name_the_row(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", "q,__expected,__threshold\nhi,contains: a,0.5\nho,regex: (x,0.5\n")
    with pytest.raises(ConfigError) as excinfo:
        load_cases([path])
    one_line(excinfo, f"{path}: row 3: assert[0]", "invalid pattern")
    path = write(tmp_path / "u.csv", "q,__threshold\nhi,high\n")
    with pytest.raises(ConfigError) as excinfo:
        load_cases([path])
    one_line(excinfo, f"{path}: row 2: __threshold: expected a number, got 'high'")


@pytest.mark.parametrize(
    ("cell", "near"),
    [("containz: foo", "contains"), ("not-icontainz: x", "not-icontains"), ("regexp: a+", "regex")],
)
def test_csv_misspelt_assertion_type_is_an_error(tmp_path: Path, cell: str, near: str) -> None:
    path = write(tmp_path / "t.csv", f"q,__expected\nhi,ok\nho,{cell}\n")
    with pytest.raises(ConfigError) as excinfo:
        load_cases([path])
    one_line(excinfo, f"{path}: row 3: __expected: unknown assertion type")
    assert f"did you mean {near!r}?" in str(excinfo.value)


@pytest.mark.parametrize(
    ("cell", "value"),
    [("Paris: the capital", "Paris: the capital"), ("equals:containz: foo", "containz: foo"), ("a:b", "a:b")],
)
def test_csv_other_prefixes_stay_equals(tmp_path: Path, cell: str, value: str) -> None:
    [case] = load_cases([write(tmp_path / "t.csv", f"q,__expected\nhi,{cell}\n")])
    assert [(c.type, c.value) for c in case.checks] == [("equals", value)]


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_file_var_must_be_a_regular_file(tmp_path: Path, special: str) -> None:
    if special == "fifo":
        os.mkfifo(tmp_path / "fifo")
    config = write(tmp_path / "pf.yaml", f"tests:\n  - vars: {{doc: 'file://{special}'}}\n")
    with pytest.raises(ConfigError) as excinfo:
        load_cases([config])
    one_line(excinfo, f"{config}: tests[0].vars.doc: ")
    assert "not a regular file" in str(excinfo.value)


def test_file_var_is_at_most_10_mb(tmp_path: Path) -> None:
    with (tmp_path / "doc.txt").open("wb") as handle:
        handle.truncate(10 * 2**20 + 1)
    config = write(tmp_path / "pf.yaml", "tests:\n  - vars: {doc: 'file://doc.txt'}\n")
    with pytest.raises(ConfigError) as excinfo:
        load_cases([config])
    one_line(excinfo, f"{config}: tests[0].vars.doc: {tmp_path / 'doc.txt'}: file is larger than 10 MB")
