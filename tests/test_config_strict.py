"""Every number and boolean of assay.yaml is taken as YAML typed it: one test walks the whole schema and, for each
such field at any depth (a runner of each type, a list item, a mapping value), writes a config where it holds
a value of the wrong type — ``true`` or the text ``'1'`` for a number, ``1`` or ``'true'`` for a boolean — and
expects one error naming the file and that field, never a converted value."""

from __future__ import annotations

from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pytest
import yaml
from pydantic import BaseModel

from assay.config import AssayConfig, load_config
from assay.errors import ConfigError

BASE: dict[str, Any] = {
    "artifact": {"paths": ["a.py"]},
    "cases": {"files": ["cases.yaml"]},
    "runner": {"type": "command", "command": "python a.py {input}"},
}
# Required text fields, by name, and what a valid value of each is.
REQUIRED = {"model": "openai:gpt-4o-mini", "command": "echo {input}", "function": "m:f", "type": "contains"}
Path_ = tuple[Any, ...]


class Replace(dict[str, Any]):
    """A section written whole, not merged into what the base config has there (a runner of another type)."""


def members(annotation: Any) -> list[Any]:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, UnionType):
        return [m for arg in get_args(annotation) for m in members(arg)]
    return [] if annotation is type(None) else [annotation]


def kind_of(annotation: Any) -> str | None:
    """``number``, ``bool`` or None (not a leaf this test is about)."""
    if annotation is bool:
        return "bool"
    if annotation in (int, float):
        return "number"
    if get_origin(annotation) is Literal and all(
        isinstance(a, int) and not isinstance(a, bool) for a in get_args(annotation)
    ):
        return "number"  # the layers: 1, 2, 3
    return None


def is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def minimal(model: type[BaseModel]) -> dict[str, Any]:
    """The required fields of ``model`` with valid values."""
    values: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if not field.is_required():
            continue
        if name in REQUIRED:
            values[name] = REQUIRED[name]
        elif name == "paths":
            values[name] = ["a.py"]
        elif name == "files":
            values[name] = ["cases.yaml"]
        else:
            (inner,) = members(field.annotation)
            values[name] = minimal(inner) if is_model(inner) else "x"
    return values


def leaves(model: type[BaseModel], at: Path_ = (), setup: tuple[tuple[Path_, Any], ...] = ()) -> list[Any]:
    """(path, kind, what the parents need) of every number and boolean under ``model``."""
    found = []
    for name, field in model.model_fields.items():
        if name == "path":  # set by load_config, never read from the file
            continue
        for member in members(field.annotation):
            here = (*at, name)
            found += walk(member, here, setup)
    return found


def walk(annotation: Any, here: Path_, setup: tuple[tuple[Path_, Any], ...]) -> list[Any]:
    kind = kind_of(annotation)
    if kind is not None:
        return [(here, kind, setup)]
    if is_model(annotation):
        tag = annotation.model_fields.get("type")
        parent = {**minimal(annotation)}
        if tag is not None and get_origin(tag.annotation) is Literal and len(get_args(tag.annotation)) == 1:
            parent["type"] = get_args(tag.annotation)[
                0
            ]  # one member of a tagged union: it replaces the base's
            return leaves(annotation, here, (*setup, (here, Replace(parent))))
        return leaves(annotation, here, (*setup, (here, parent)))
    origin = get_origin(annotation)
    if origin is list:
        return [
            leaf
            for member in members(get_args(annotation)[0])
            for leaf in walk(member, (*here, 0), (*setup, (here, [])))
        ]
    if origin is dict:
        return [
            leaf
            for member in members(get_args(annotation)[1])
            for leaf in walk(member, (*here, "k"), (*setup, (here, {})))
        ]
    return []


def place(document: dict[str, Any], path: Path_, value: Any) -> None:
    """Set ``value`` at ``path``, keeping what is there already (a list is replaced by ``[value]``)."""
    *parents, last = path
    node: Any = document
    for part in parents:
        node = node[part]
    if isinstance(node, list):
        if node:
            node[0] = value
        else:
            node.append(value)
    elif isinstance(value, Replace):
        node[last] = dict(value)
    elif isinstance(value, dict) and isinstance(node.get(last), dict):
        node[last] = {**node[last], **value}
    else:
        node[last] = value


def rendered(path: Path_) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def document(path: Path_, setup: tuple[tuple[Path_, Any], ...], value: Any) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(yaml.safe_dump(BASE))
    for where, parent in setup:
        copied = yaml.safe_load(yaml.safe_dump(dict(parent) if isinstance(parent, Replace) else parent))
        place(doc, where, Replace(copied) if isinstance(parent, Replace) else copied)
    place(doc, path, value)
    return doc


LEAVES = leaves(AssayConfig)
WRONG = {"number": [True, "1"], "bool": [1, "true"]}
CASES = [(path, kind, setup, wrong) for path, kind, setup in LEAVES for wrong in WRONG[kind]]


def test_the_walk_reaches_every_section() -> None:
    paths = {rendered(path) for path, _, _ in LEAVES}
    assert len(paths) > 80
    for expected in (
        "concurrency",
        "cache",
        "cases.split.dev",
        "runner.timeout",  # of the command, python, llm and agent runners alike
        "runner.temperature",
        "runner.stdin",
        "evolve.gate_options.k",
        "evolve.layers[0]",
        "evolve.parameters.k.low",
        "evolve.proposer.llm.temperature",
        "evolve.tournament.judge_llm.max_tokens",
        "judge.votes",
        "checks[0].weight",
        "checks[0].negate",
        "executor.num_cpus",
        "traces.compress",
    ):
        assert expected in paths, expected


@pytest.mark.parametrize(
    ("path", "kind", "setup", "wrong"), CASES, ids=[f"{rendered(c[0])}={c[3]!r}" for c in CASES]
)
def test_a_value_of_the_wrong_type_is_refused_naming_its_field(
    tmp_path: Path, path: Path_, kind: str, setup: Any, wrong: Any
) -> None:
    config = tmp_path / "assay.yaml"
    config.write_text(yaml.safe_dump(document(path, setup, wrong), sort_keys=False))
    with pytest.raises(ConfigError) as refused:
        load_config(config)
    message = str(refused.value)
    assert message.startswith(f"{config}: {rendered(path)}: "), message
    assert "\n" not in message


CONTROLS = [
    (path, setup, value)
    for path, kind, setup in LEAVES
    for name, value in (("timeout", 4), ("concurrency", 4), ("weight", 2), ("negate", True), ("low", 0.5))
    if path[-1] == name
]


@pytest.mark.parametrize(("path", "setup", "value"), CONTROLS, ids=[rendered(c[0]) for c in CONTROLS])
def test_the_same_documents_with_a_value_of_the_right_type_load(
    tmp_path: Path, path: Path_, setup: Any, value: Any
) -> None:
    # The control: the documents above are valid but for the one value (timeout: 4 loads, of every runner).
    config = tmp_path / "assay.yaml"
    config.write_text(yaml.safe_dump(document(path, setup, value), sort_keys=False))
    assert load_config(config) is not None


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("concurrency: true", "concurrency", "expected a whole number, got true (a boolean)"),
        (
            "cases: {files: [cases.yaml], split: {dev: '0.7', holdout: 0.2, regression: 0.1}}",
            "cases.split.dev",
            "expected a number, got '0.7' (text: write a number without quotes)",
        ),
        ("cache: 1", "cache", "expected true or false, got 1 (a number)"),
        (
            "evolve: {max_generations: 2.5}",
            "evolve.max_generations",
            "expected a whole number, got 2.5 (not a whole number)",
        ),
    ],
)
def test_the_issues_inputs_say_what_was_expected_and_what_was_given(
    tmp_path: Path, text: str, field: str, message: str
) -> None:
    config = tmp_path / "assay.yaml"
    doc = {**BASE, **yaml.safe_load(text)}
    config.write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError) as refused:
        load_config(config)
    assert str(refused.value) == f"{config}: {field}: {message}"


def test_an_exponent_is_a_number_as_yaml_1_2_reads_it(tmp_path: Path) -> None:
    config = tmp_path / "assay.yaml"
    config.write_text(
        "artifact: {paths: [a.py]}\ncases: {files: [cases.yaml]}\nrunner: {type: command, command: x}\n"
        "evolve: {gate_options: {min_delta: 1e-3}}\n"
    )
    assert load_config(config).evolve.gate_options == {"min_delta": 0.001}
