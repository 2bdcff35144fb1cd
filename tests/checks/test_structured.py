from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from assay.checks import CheckContext, CheckSpecError, build_check, structured
from assay.model import Case, CheckResult, CheckSpec, Output

PERSON = {
    "type": "object",
    "required": ["name", "age"],
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
}


async def judge(
    text: str, type_: str, value: Any = None, project_dir: Path | None = None, **kw: Any
) -> CheckResult:
    check = build_check(CheckSpec(type=type_, value=value, **kw))
    return await check.run(Output(text=text), CheckContext(case=Case(id="c1"), project_dir=project_dir))


@pytest.mark.parametrize(
    "text",
    ['{"a": 1}', "  \n[1, 2]\n ", '```json\n{"a": [1, 2]}\n```', '\n```\n"just a string"\n```\n', "3.5"],
)
async def test_json_valid_accepts_json_with_whitespace_or_fence(text: str) -> None:
    assert (await judge(text, "json_valid")).passed


async def test_json_valid_rejects_with_location() -> None:
    result = await judge('{"a": 1,}', "json_valid")
    assert not result.passed and result.score == 0
    assert "line 1 column " in result.evidence  # 9 before Python 3.13, 8 from it
    empty = await judge("   ", "json_valid")
    assert not empty.passed and "empty" in empty.evidence
    prose = await judge('Here you go: {"a": 1}', "json_valid")
    assert not prose.passed


async def test_json_valid_negated() -> None:
    assert (await judge("not json", "json_valid", negate=True)).passed
    assert not (await judge("{}", "json_valid", negate=True)).passed


async def test_json_schema_inline_pass_and_fail() -> None:
    assert (await judge('{"name": "Ada", "age": 36}', "json_schema", PERSON)).passed
    failed = await judge('{"name": "Ada", "age": -1}', "json_schema", PERSON)
    assert not failed.passed
    assert failed.evidence.startswith("$.age: -1 is less than the minimum of 0")
    missing = await judge('```json\n{"name": "Ada"}\n```', "json_schema", PERSON)
    assert not missing.passed and "'age' is a required property" in missing.evidence
    assert "invalid JSON" in (await judge("{oops", "json_schema", PERSON)).evidence


async def test_a_schema_pattern_that_backtracks_without_end_fails_in_bounded_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(structured, "REGEX_SECONDS", 0.2)
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a|a)+$"}}}
    began = time.perf_counter()
    result = await judge(json.dumps({"code": "a" * 40 + "!"}), "json_schema", schema)
    assert time.perf_counter() - began < 5
    assert not result.passed and "no answer from '^(a|a)+$' within 0.2 s" in result.evidence
    assert (await judge('{"code": "aaa"}', "json_schema", schema)).passed
    failed = await judge('{"code": "ab"}', "json_schema", schema)
    assert failed.evidence.startswith("$.code: 'ab' does not match '^(a|a)+$'")  # as jsonschema words it


async def test_json_schema_reports_first_error_and_count() -> None:
    result = await judge('{"name": 5, "age": "x"}', "json_schema", PERSON)
    assert result.evidence.startswith("$.age: 'x' is not of type 'integer'")
    assert "(+1 more)" in result.evidence


async def test_json_schema_from_json_and_yaml_files(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "person.json").write_text(json.dumps(PERSON))
    (tmp_path / "schemas" / "list.yaml").write_text("type: array\nitems:\n  type: integer\nminItems: 2\n")
    assert (await judge('{"name": "A", "age": 1}', "json_schema", "schemas/person.json", tmp_path)).passed
    assert not (await judge('{"name": "A"}', "json_schema", "schemas/person.json", tmp_path)).passed
    assert (await judge("[1, 2]", "json_schema", "file://schemas/list.yaml", tmp_path)).passed
    short = await judge("[1]", "json_schema", "schemas/list.yaml", tmp_path)
    assert not short.passed and "is too short" in short.evidence


async def test_json_schema_absolute_file_is_checked_at_load(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "nonsense"}')
    with pytest.raises(
        CheckSpecError, match=r"json_schema: schema file .*bad.json' is not a valid schema at \$.type"
    ):
        build_check(CheckSpec(type="json_schema", value=str(bad)))
    good = tmp_path / "good.json"
    good.write_text(json.dumps(PERSON))
    assert (await judge('{"name": "A", "age": 2}', "json_schema", str(good))).passed


async def test_json_schema_missing_relative_file_fails_the_case_not_the_run(tmp_path: Path) -> None:
    result = await judge("{}", "json_schema", "nowhere.json", tmp_path)
    assert not result.passed and "cannot read schema file" in result.evidence
    check = build_check(CheckSpec(type="json_schema", value="nowhere.json"))
    with pytest.raises(CheckSpecError, match="cannot read schema file"):
        check.load_schema(tmp_path)  # type: ignore[attr-defined]


async def test_json_schema_file_that_does_not_parse(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("type: [unclosed\n")
    result = await judge("{}", "json_schema", "s.yaml", tmp_path)
    assert not result.passed and "does not parse" in result.evidence


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "json_schema: value is required"),
        ({"type": 12}, "json_schema: value is not a valid schema at $.type"),
        (
            {"properties": {"a": {"minimum": "zero"}}},
            "json_schema: value is not a valid schema at $.properties.a.minimum",
        ),
        ("schema.txt", "json_schema: schema file 'schema.txt' must end in .json, .yaml or .yml"),
        (["type", "object"], "json_schema: value is required"),
    ],
)
def test_bad_schemas_raise_at_load(value: Any, message: str) -> None:
    with pytest.raises(CheckSpecError) as info:
        build_check(CheckSpec(type="json_schema", value=value))
    assert str(info.value).startswith(message)
