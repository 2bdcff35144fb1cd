"""``mutate``: routing by file kind and layer, determinism, and None when nothing applies."""

from __future__ import annotations

import json
import random

import pytest
import yaml

from assay.proposers.mutate import OPERATORS, file_kind, mutate, operators_for
from tests.proposers.mutate.samples import dump, statements

PROJECT = {
    "prompt.md": "# Task\n\nAnswer briefly, in English. Never guess.\n\nCite the source.\n",
    "settings.yaml": "model: small\nmodels: [small, large]\ntemperature: 0.2\nverbose: false\n",
    "weights.json": '{"alpha": 0.5, "names": ["a", "b"]}\n',
}


def test_same_seed_same_mutation_whatever_the_dict_order(binpack: str) -> None:
    files = {**PROJECT, "priority.py": binpack}
    reordered = dict(reversed(list(files.items())))
    for layer in (1, 2, 3):
        for seed in range(5):
            first = mutate(files, layer=layer, rng=random.Random(seed))
            assert first == mutate(reordered, layer=layer, rng=random.Random(seed))
            assert first is not None and first.new_text != files[first.path]


def test_different_seeds_reach_every_file() -> None:
    paths = {mutate(PROJECT, layer=1, rng=random.Random(seed)).path for seed in range(30)}  # type: ignore[union-attr]
    assert paths == set(PROJECT)


def test_operators_match_the_file_kind_and_layer(binpack: str) -> None:
    files = {**PROJECT, "priority.py": binpack}
    for layer in (1, 2, 3):
        for seed in range(30):
            mutation = mutate(files, layer=layer, rng=random.Random(seed))
            op = OPERATORS.get(mutation.operator)  # type: ignore[union-attr]
            assert op.layer == layer
            assert op.kind == file_kind(mutation.path, files[mutation.path])  # type: ignore[union-attr]


def test_results_still_parse_by_file_type(binpack: str) -> None:
    files = {**PROJECT, "priority.py": binpack}
    for layer in (1, 2, 3):
        for seed in range(20):
            mutation = mutate(files, layer=layer, rng=random.Random(seed))
            assert mutation is not None
            if mutation.path.endswith(".py"):
                compile(mutation.new_text, mutation.path, "exec")
            elif mutation.path.endswith(".json"):
                assert json.loads(mutation.new_text) != json.loads(files[mutation.path])
            elif mutation.path.endswith(".yaml"):
                assert yaml.safe_load(mutation.new_text) != yaml.safe_load(files[mutation.path])


def test_layer_one_keeps_statements_and_layer_two_changes_them(binpack: str) -> None:
    files = {"priority.py": binpack}
    counts = set()
    for seed in range(40):
        surface = mutate(files, layer=1, rng=random.Random(seed))
        assert statements(surface.new_text) == statements(binpack)  # type: ignore[union-attr]
        core = mutate(files, layer=2, rng=random.Random(seed))
        count = statements(core.new_text)  # type: ignore[union-attr]
        expected = {
            "py.delete_statement": count < statements(binpack),
            "py.duplicate_statement": count > statements(binpack),
            # an if and the return it guards; on the arrays this function returns, a case of np.where
            "py.guard": count == statements(binpack) + (0 if "np.where(" in core.description else 2),  # type: ignore[union-attr]
        }
        assert expected.get(core.operator, count == statements(binpack))  # type: ignore[union-attr]
        assert dump(core.new_text) != dump(binpack)  # type: ignore[union-attr]
        counts.add((count > statements(binpack)) - (count < statements(binpack)))
    assert counts == {-1, 0, 1}


def test_binpack_priority_mutated_200_times_always_compiles_and_differs(binpack: str) -> None:
    rng = random.Random(7)
    operators = set()
    for generation in range(200):
        mutation = mutate({"priority.py": binpack}, layer=generation % 3 + 1, rng=rng)
        assert mutation is not None, generation
        compile(mutation.new_text, "priority.py", "exec")
        assert mutation.new_text != binpack and dump(mutation.new_text) != dump(binpack)
        assert "\n" not in mutation.description and mutation.description.startswith("python: ")
        operators.add(mutation.operator)
    assert operators == {name for name in OPERATORS.names() if name.startswith("py.")}


def test_successive_mutations_can_be_chained(binpack: str) -> None:
    text, rng = binpack, random.Random(11)
    for generation in range(60):
        mutation = mutate({"priority.py": text}, layer=generation % 3 + 1, rng=rng)
        if mutation is not None:
            compile(mutation.new_text, "priority.py", "exec")
            text = mutation.new_text
    assert text != binpack


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"empty.md": ""},
        {"blank.txt": "  \n\n"},
        {"image.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00"},
        {"data.bin": "".join(chr(c) for c in range(1, 32)) * 10},
        {"broken.py": "def f(:\n    return 1\n"},
        {"broken.json": '{"a": '},
    ],
)
def test_nothing_applicable_gives_none(files: dict[str, str]) -> None:
    for layer in (1, 2, 3):
        assert mutate(files, layer=layer, rng=random.Random(0)) is None


def test_a_layer_without_operators_for_the_file_gives_none() -> None:
    assert mutate({"x.py": "x = 1\n"}, layer=3, rng=random.Random(0)) is None
    assert mutate({"x.py": "x = 1\n"}, layer=1, rng=random.Random(0)) is not None


def test_unknown_layer_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"layer must be 1 \(surface\), 2 \(core\) or 3 \(architecture\)"):
        mutate(PROJECT, layer=4, rng=random.Random(0))


def test_file_kinds_and_operator_table() -> None:
    assert [file_kind(p, "x = 1\n") for p in ("a.py", "b.JSON", "c.yml", "d.toml", "SKILL.md", "notes")] == [
        "python", "config", "config", "config", "text", "text",
    ]  # fmt: skip
    assert [op.name for op in operators_for("config", 2)] == ["cfg.enum", "cfg.list_reorder"]
    assert {op.layer for op in operators_for("text", 3)} == {3}
    assert all(operators_for(kind, layer) for kind in ("python", "config", "text") for layer in (1, 2, 3))


def test_an_operator_named_in_skip_is_never_drawn(binpack: str) -> None:
    files = {"priority.py": binpack}
    drawn = {m.operator for seed in range(60) if (m := mutate(files, layer=1, rng=random.Random(seed)))}
    assert len(drawn) >= 2
    skip = sorted(drawn)[:-1]
    left = {
        m.operator for seed in range(60) if (m := mutate(files, layer=1, rng=random.Random(seed), skip=skip))
    }
    assert left and not left & set(skip)
    assert mutate(files, layer=1, rng=random.Random(0), skip=OPERATORS.names()) is None
