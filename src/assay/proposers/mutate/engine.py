"""``mutate``: pick a file and an operator suited to its kind and the layer, and return one mutation."""

from __future__ import annotations

import random
from collections.abc import Collection
from functools import partial
from pathlib import PurePosixPath

from assay.proposers.mutate import (
    config_ops,
    fewshot,
    python_arch_ops,
    python_combine_ops,
    python_grow_ops,
    python_ops,
    python_stmt_ops,
    text_ops,
)
from assay.proposers.mutate.base import FileKind, Mutation, Operator
from assay.proposers.mutate.config_ops import apply_config
from assay.proposers.mutate.pysource import apply_python
from assay.proposers.mutate.text_ops import apply_text
from assay.registry import Registry

LAYERS = (1, 2, 3)
CONFIG_FORMATS = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml"}
MAX_FAILURES = 3  # an operator that found nothing this many times on a file is not tried on it again

OPERATORS: Registry[Operator] = Registry("mutation operator")
"""Every built-in operator by name (``py.constant``, ``cfg.enum``, ``text.swap_sections``, ...)."""

_PYTHON = {
    "py.constant": (1, python_ops.mutate_constant),
    "py.compare": (1, python_ops.mutate_compare),
    "py.arithmetic": (1, python_ops.mutate_arithmetic),
    "py.boolean": (1, python_ops.mutate_boolean),
    "py.swap_statements": (2, python_stmt_ops.swap_statements),
    "py.delete_statement": (2, python_stmt_ops.delete_statement),
    "py.duplicate_statement": (2, python_stmt_ops.duplicate_statement),
    "py.negate_if": (2, python_stmt_ops.negate_if),
    "py.swap_branches": (2, python_stmt_ops.swap_branches),
    "py.add_term": (2, python_grow_ops.add_term),
    "py.guard": (2, python_grow_ops.guard),
    "py.combine": (2, python_combine_ops.combine),
    "py.reorder_definitions": (3, python_arch_ops.reorder_definitions),
    "py.swap_arguments": (3, python_arch_ops.swap_arguments),
    "py.swap_operands": (3, python_arch_ops.swap_operands),
    "py.return_variant": (3, python_arch_ops.return_variant),
    "py.wrap": (3, python_grow_ops.wrap),
}
_CONFIG = {
    "cfg.numeric": (1, config_ops.numeric),
    "cfg.bool": (1, config_ops.boolean),
    "cfg.enum": (2, config_ops.enum),
    "cfg.list_reorder": (2, config_ops.list_reorder),
    "cfg.list_remove": (3, config_ops.list_remove),
    "cfg.list_duplicate": (3, config_ops.list_duplicate),
}
_TEXT = {
    "text.delete_phrase": (1, text_ops.delete_phrase),
    "text.swap_phrases": (1, text_ops.swap_phrases),
    "text.duplicate_phrase": (1, text_ops.duplicate_phrase),
    "text.move_sentence": (2, text_ops.move_sentence),
    "text.add_reminder": (2, text_ops.add_reminder),
    "text.swap_paragraphs": (3, text_ops.swap_paragraphs),
    "text.swap_sections": (3, text_ops.swap_sections),
}


def _apply_config(
    name: str, op: config_ops.SiteOp, path: str, text: str, rng: random.Random
) -> Mutation | None:
    return apply_config(name, op, CONFIG_FORMATS[PurePosixPath(path).suffix.lower()], path, text, rng)


for _name, (_layer, _py) in _PYTHON.items():
    OPERATORS.register(_name)(Operator(_name, "python", _layer, partial(apply_python, _name, _py)))
for _name, (_layer, _cfg) in _CONFIG.items():
    OPERATORS.register(_name)(Operator(_name, "config", _layer, partial(_apply_config, _name, _cfg)))
for _name, (_layer, _text) in _TEXT.items():
    OPERATORS.register(_name)(Operator(_name, "text", _layer, partial(apply_text, _name, _text)))
for _name in fewshot.LAYERS:
    OPERATORS.register(_name)(fewshot.operator(_name))


def looks_binary(text: str) -> bool:
    """NUL bytes, or many control or replacement characters in the first 4 KB."""
    head = text[:4096]
    odd = sum(1 for c in head if (c < " " and c not in "\t\n\r\f") or c == "\ufffd")
    return "\x00" in head or odd > len(head) // 20


def file_kind(path: str, text: str) -> FileKind | None:
    """``python``, ``config`` (JSON, YAML, TOML) or ``text`` by suffix; None for empty or binary-looking files."""
    if not text.strip() or looks_binary(text):
        return None
    suffix = PurePosixPath(path).suffix.lower()
    if suffix == ".py":
        return "python"
    return "config" if suffix in CONFIG_FORMATS else "text"


def operators_for(kind: FileKind, layer: int) -> list[Operator]:
    """The operators of one file kind at one layer, in registration order."""
    return [
        op
        for op in (OPERATORS.get(n) for n in (*_PYTHON, *_CONFIG, *_TEXT, *fewshot.LAYERS))
        if (op.kind, op.layer) == (kind, layer)
    ]


def mutate(
    files: dict[str, str],
    *,
    layer: int,
    rng: random.Random,
    attempts: int = 20,
    skip: Collection[str] = (),
) -> Mutation | None:
    """One mutation of one of ``files`` (relative path to content) with an operator of ``layer``.

    Layers choose operator families: 1 surface (constants, operators, phrases, numbers and booleans),
    2 core (statements, enum values and list order, sentences), 3 architecture (definitions, arguments,
    returns, list membership, paragraphs and sections). The result changes the text and, for Python and
    configs, still parses. Deterministic for a given ``rng`` state; None when no operator applies.
    Few-shot operators (:mod:`~assay.proposers.mutate.fewshot`) also get ``files``, to read pool files, and
    are tried only on files with examples; pool files themselves are not mutated. Operators named in ``skip``
    are not drawn.
    """
    if layer not in LAYERS:
        raise ValueError(f"layer must be 1 (surface), 2 (core) or 3 (architecture), not {layer!r}")
    pairs = [
        (path, op)
        for path in sorted(files)
        if not fewshot.is_pool(path) and (kind := file_kind(path, files[path])) is not None
        for op in operators_for(kind, layer)
        if op.name not in skip
        and (not isinstance(op, fewshot.PoolOperator) or fewshot.has_examples(files, path))
    ]
    failures = dict.fromkeys(range(len(pairs)), 0)
    for _ in range(attempts):
        live = [i for i, count in failures.items() if count < MAX_FAILURES]
        if not live:
            return None
        choice = rng.choice(live)
        path, op = pairs[choice]
        if isinstance(op, fewshot.PoolOperator):
            mutation = op.apply_files(files, path, files[path], rng)
        else:
            mutation = op.apply(path, files[path], rng)
        if mutation is not None and mutation.new_text != files[path]:
            return mutation
        failures[choice] += 1
    return None
