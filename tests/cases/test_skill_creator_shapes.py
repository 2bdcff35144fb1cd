"""skill-creator evals.json in the shapes public skills give it: every one loads with its authors' checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.cases.loader import load_case_files, read_case_file
from assay.errors import ConfigError
from tests.cases._helpers import one_line, write


def _read(
    tmp_path: Path, document: Any, name: str = "evals.json"
) -> list[tuple[str, str | None, list[tuple[str, Any]]]]:
    loaded = read_case_file(write(tmp_path / name, json.dumps(document)))
    assert loaded.format == "skill-creator"
    return [(c.id, c.input, [(s.type, s.value) for s in c.checks]) for c, _ in loaded.cases]


RUBRIC = "The summary names the invoice's due date"


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        pytest.param(
            {
                "skill_name": "invoices",
                "evals": [
                    {
                        "id": 1,
                        "prompt": "Summarise invoice 7",
                        "expected_output": "A short summary",
                        "expectations": ["[contains] Total:", RUBRIC],
                    }
                ],
            },
            [("1", "Summarise invoice 7", [("contains", "Total:"), ("llm_judge", RUBRIC)])],
            id="documented-expectations",
        ),
        pytest.param(
            {
                "evals": [
                    {"id": 2, "prompt": "Summarise", "assertions": ["[regex] \\d{4}-\\d{2}-\\d{2}", RUBRIC]}
                ]
            },
            [("2", "Summarise", [("regex", "\\d{4}-\\d{2}-\\d{2}"), ("llm_judge", RUBRIC)])],
            id="assertions-strings",
        ),
        pytest.param(
            {
                "evals": [
                    {
                        "id": 3,
                        "prompt": "Summarise",
                        "assertions": [{"name": "due-date", "description": RUBRIC}],
                    }
                ]
            },
            [("3", "Summarise", [("llm_judge", RUBRIC)])],
            id="assertions-name-description",
        ),
        pytest.param(
            {
                "evals": [
                    {
                        "id": 4,
                        "prompt": "Summarise",
                        "assertions": [{"text": RUBRIC}, {"id": "a2", "text": "[icontains] total"}],
                    }
                ]
            },
            [("4", "Summarise", [("llm_judge", RUBRIC), ("icontains", "total")])],
            id="assertions-text-and-id-text",
        ),
        pytest.param(
            {"evals": [{"name": "due-date", "input": "Summarise", "expected": [RUBRIC]}]},
            [("due-date", "Summarise", [("llm_judge", RUBRIC)])],
            id="expected-list",
        ),
        pytest.param(
            {
                "evals": [
                    {"id": 6, "query": "Summarise", "expected_behaviors": ["Asks which invoice", RUBRIC]}
                ]
            },
            [("6", "Summarise", [("llm_judge", "Asks which invoice"), ("llm_judge", RUBRIC)])],
            id="expected-behaviors",
        ),
        pytest.param(
            {"evals": [{"id": 7, "prompt": "Summarise", "must_have": ["Total"], "must_not_have": ["TODO"]}]},
            [("7", "Summarise", [("contains", "Total"), ("not_contains", "TODO")])],
            id="must-have-must-not-have",
        ),
        pytest.param(
            [{"id": "top", "prompt": "Summarise", "expectations": [RUBRIC]}],
            [("top", "Summarise", [("llm_judge", RUBRIC)])],
            id="top-level-list",
        ),
        pytest.param(
            {"cases": [{"id": "c1", "question": "Summarise", "assertions": ["[not_contains] lorem"]}]},
            [("c1", "Summarise", [("not_contains", "lorem")])],
            id="cases-key",
        ),
        pytest.param(
            {
                "skill": "invoices",
                "test_cases": [{"eval_id": 9, "prompt": "Summarise", "expected_behavior": RUBRIC}],
            },
            [("9", "Summarise", [("llm_judge", RUBRIC)])],
            id="test-cases-key",
        ),
    ],
)
def test_every_shape_loads_with_its_checks(tmp_path: Path, document: Any, expected: list[Any]) -> None:
    assert _read(tmp_path, document) == expected


def test_text_keeps_the_authors_wording(tmp_path: Path) -> None:
    path = write(
        tmp_path / "evals.json",
        json.dumps(
            {"evals": [{"id": 1, "prompt": "p", "assertions": [{"name": "n", "description": RUBRIC}]}]}
        ),
    )
    ((case, _),) = read_case_file(path).cases
    assert case.checks[0].text == RUBRIC


def test_an_eval_without_expectations_is_unjudged_and_named(tmp_path: Path) -> None:
    path = write(
        tmp_path / "evals.json",
        json.dumps(
            {
                "evals": [
                    {"id": "judged", "prompt": "a", "expectations": ["[contains] a"]},
                    {"id": "bare", "prompt": "b", "expected_output": "B, in prose only"},
                ]
            }
        ),
    )
    load = load_case_files([path])
    assert [c.id for c in load.unjudged] == ["bare"]
    assert [c.judged for c in load.cases] == [True, False]
    (note,) = [w for w in load.warnings if "unjudged" in w]
    assert "1 case has no checks" in note and "bare" in note and str(path) in note


def test_require_checks_makes_unjudged_cases_a_load_error(tmp_path: Path) -> None:
    path = write(
        tmp_path / "evals.json",
        json.dumps(
            {"evals": [{"id": "a", "prompt": "a", "expectations": ["x"]}, {"id": "b", "prompt": "b"}]}
        ),
    )
    with pytest.raises(ConfigError) as excinfo:
        load_case_files([path], require_checks=True)
    one_line(excinfo, str(path), "require_checks", "(b)")


def test_fields_read_for_nothing_are_warned_about(tmp_path: Path) -> None:
    path = write(
        tmp_path / "evals.json",
        json.dumps({"evals": [{"id": 1, "prompt": "a", "expectations": ["x"], "grader_model": "opus"}]}),
    )
    warnings = read_case_file(path).warnings
    assert any("grader_model" in w for w in warnings), warnings


def test_a_trigger_eval_set_is_refused_saying_what_it_is(tmp_path: Path) -> None:
    path = write(
        tmp_path / "trigger-eval.json",
        json.dumps(
            {"skill_name": "wrap-up", "queries": [{"query": "wrap this session up", "should_trigger": True}]}
        ),
    )
    with pytest.raises(ConfigError) as excinfo:
        read_case_file(path)
    one_line(excinfo, str(path), "queries", "trigger eval set", "assay judges outputs")
