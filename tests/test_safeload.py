"""The shared YAML/JSON loader: nesting, alias and duplicate-key limits with line and field, and the same
data as PyYAML's safe loader for everything else."""

from __future__ import annotations

import json

import pytest
import yaml

from assay.safeload import (
    MAX_DEPTH,
    NestingError,
    SafeLoader,
    YAMLInputError,
    load_json,
    load_yaml,
    load_yaml_documents,
)


def flow_seq(depth: int) -> str:
    return "x: " + "[" * depth + "]" * depth


def flow_map(depth: int) -> str:
    return "x: " + "{a: " * depth + "1" + "}" * depth


def block_map(depth: int) -> str:
    return "\n".join(" " * i + "a:" for i in range(depth)) + " 1"


def compact_seq(depth: int) -> str:
    return "x:\n" + "- " * depth + "leaf"


SHAPES = [flow_seq, flow_map, block_map, compact_seq]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda f: f.__name__)
def test_nesting_up_to_the_limit_loads_and_beyond_is_refused(shape) -> None:
    # flow_seq and flow_map nest one level under "x", block_map starts at the top: keep within the limit.
    inner = MAX_DEPTH - 1 if shape is not block_map else MAX_DEPTH
    assert load_yaml(shape(inner)) == yaml.safe_load(shape(inner))
    with pytest.raises(YAMLInputError, match=f"nested deeper than {MAX_DEPTH} levels") as info:
        load_yaml(shape(inner + 1))
    assert info.value.field and "..." in info.value.field


@pytest.mark.parametrize("shape", SHAPES, ids=lambda f: f.__name__)
def test_very_deep_documents_fail_cleanly(shape) -> None:
    # libyaml's recursive composer crashes the process near 50,000 levels; PyYAML's raises RecursionError.
    # (Block indentation that deep would be a 1.8 GB text: 5,000 levels show the same.)
    with pytest.raises(YAMLInputError, match="nested deeper than"):
        load_yaml(shape(5_000 if shape is block_map else 60_000))


def test_depth_error_names_line_and_field() -> None:
    text = "runner:\n  type: command\n  env:\n    deep: " + "{a: " * 200 + "1" + "}" * 200
    with pytest.raises(YAMLInputError) as info:
        load_yaml(text)
    assert info.value.problem_mark.line == 3
    assert info.value.field == "runner.env.deep.a.a..."


def test_aliases_count_towards_depth() -> None:
    # Each anchor nests the previous one 40 levels deeper: the text is shallow, the data is not.
    lines = ["a0: &a0 " + "[" * 40 + "]" * 40]
    for i in range(1, 4):
        lines.append(f"a{i}: &a{i} " + "[" * 40 + f"*a{i - 1}" + "]" * 40)
    with pytest.raises(YAMLInputError, match="through alias \\*a1: nested deeper"):
        load_yaml("\n".join(lines))
    assert load_yaml("\n".join(lines[:2]))["a1"][0] is not None


def test_billion_laughs_is_refused() -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    with pytest.raises(YAMLInputError, match="aliases expand to more than 1,000,000 nodes"):
        load_yaml("\n".join(lines))
    shared = load_yaml("\n".join(lines[:3]))
    assert len(shared["a2"]) == 10 and shared["a2"][0][0] == ["lol"] * 10


def test_an_alias_inside_its_own_node_is_refused() -> None:
    with pytest.raises(YAMLInputError, match=r"alias \*v is inside the node it names") as info:
        load_yaml("vars: &v {self: *v}")
    assert info.value.field == "vars.self"


@pytest.mark.parametrize(
    ("text", "key", "line", "field"),
    [
        ("runner: a\ncases: b\nrunner: c\n", "runner", 3, "runner"),
        ("runner:\n  timeout: 1\n  type: x\n  timeout: 2\n", "timeout", 4, "runner.timeout"),
        ("cases:\n  - {id: a, id: b}\n", "id", 2, "cases[0].id"),
        ("{true: a, yes: b}", "yes", 1, "yes"),
        ("'a': 1\n\"a\": 2\n", "a", 2, "a"),
    ],
)
def test_duplicate_keys_are_refused_with_line_and_field(text: str, key: str, line: int, field: str) -> None:
    with pytest.raises(YAMLInputError, match=f"duplicate key {key!r} \\(first at line") as info:
        load_yaml(text)
    assert info.value.problem_mark.line + 1 == line
    assert info.value.field == field


def test_merge_keys_may_be_overridden() -> None:
    text = "base: &b {timeout: 1, type: x}\nrunner:\n  <<: *b\n  timeout: 2\n"
    assert load_yaml(text) == {"base": {"timeout": 1, "type": "x"}, "runner": {"timeout": 2, "type": "x"}}


@pytest.mark.parametrize("text", ["when: 2001-13-01", "n: " + "9" * 5000])
def test_scalars_that_do_not_convert_are_yaml_errors(text: str) -> None:
    with pytest.raises(yaml.YAMLError, match="cannot read"):
        load_yaml(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: [x, 'y', \"z\"]\nc: {d: null, e: true, f: 1.5, g: 2001-12-14}\n",
        "- &x {a: 1}\n- *x\n- !!str 12\n- ~\n- .inf\n- 0o17\n- 1_000\n",
        "text: |\n  line one\n  line two\nfolded: >\n  a\n  b\n",
        "",
        "# only a comment\n",
        "? complex key\n: value\n",
    ],
)
def test_same_data_as_pyyaml(text: str) -> None:
    assert load_yaml(text) == yaml.safe_load(text)


def test_documents_and_single_document() -> None:
    text = "a: 1\n---\nb: 2\n"
    assert load_yaml_documents(text) == [{"a": 1}, {"b": 2}]
    with pytest.raises(yaml.YAMLError, match="expected a single document"):
        load_yaml(text)
    with pytest.raises(YAMLInputError, match="duplicate key"):
        load_yaml_documents("a: 1\n---\nb: 2\nb: 3\n")


def test_uses_libyaml_when_available() -> None:
    if yaml.__with_libyaml__:
        assert issubclass(SafeLoader, yaml.CSafeLoader)
    else:
        assert issubclass(SafeLoader, yaml.SafeLoader)


def test_json_nesting_limit_names_the_field() -> None:
    inner = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert load_json(f'{{"a": {inner}}}') == json.loads(f'{{"a": {inner}}}')
    deeper = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    with pytest.raises(NestingError, match="nested deeper than") as info:
        load_json(f'{{"a": [1, {deeper}]}}')
    assert info.value.field == "a[1][0][0][0]..."


def test_json_too_deep_for_the_json_module_names_line_and_field() -> None:
    text = '{"evals": [{"id": 1, "note": "a, [b]: {", "x": ' + "[" * 5000 + "]" * 5000 + "}]}"
    with pytest.raises(NestingError) as info:
        load_json(text)
    assert str(info.value).startswith("column ") and "nested deeper than" in str(info.value)
    assert info.value.field == "evals[0].x[0][0]..."
    with pytest.raises(NestingError, match="line 2, column"):
        load_json("[\n" + "[" * 5000)


def test_json_numbers_python_cannot_hold_are_value_errors() -> None:
    with pytest.raises(ValueError, match="digits"):
        load_json("[" + "9" * 5000 + "]")


def test_a_text_parsed_once_is_not_parsed_again_by_the_syntax_check(monkeypatch) -> None:
    import assay.safeload as safeload

    text = "tests:\n" + "".join(f"  - vars: {{q: question {i}}}\n" for i in range(50))
    assert len(safeload.load_yaml(text)["tests"]) == 50

    def refuse(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(safeload, "load_yaml_documents", refuse)
    safeload.check_yaml_documents(text)  # known: no second parse
    with pytest.raises(AssertionError, match="parsed again"):
        safeload.check_yaml_documents(text + "# changed\n")


def test_the_syntax_check_still_refuses_what_never_parsed() -> None:
    from assay.safeload import check_yaml_documents

    with pytest.raises(yaml.YAMLError):
        check_yaml_documents("a: [1, 2\n")
    with pytest.raises(yaml.YAMLError, match="duplicate key"):
        check_yaml_documents("a: 1\na: 2\n")
