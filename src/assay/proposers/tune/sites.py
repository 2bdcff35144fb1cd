"""Where the tunable numbers of an artifact are: one :class:`NumberSite` per number in a JSON, YAML or TOML
value (lists included) and per numeric literal of a Python file (module constants by their name, literals in
a function by the function's name and their rank in it).

Left out as not worth tuning: booleans, non-finite numbers, Python subscripts (``x[0]``) and keyword arguments
named like the below, and the literals 0 and 1 (counters, indices and identities far more often than knobs) but
where a user named them as a parameter: a module or class constant, a function's default, an attribute, a keyword
argument (:func:`_named_values`); and a float 1.0 that multiplies (``1.0 * error``: a gain someone wrote to be
set).
Numbers under a key or constant whose name says port, seed, index, id or version are sites marked ``excluded``:
left alone unless ``evolve.parameters`` names them.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from assay.proposers.mutate.base import excluded_name
from assay.proposers.mutate.config_ops import config_sites
from assay.proposers.mutate.pysource import SCOPES, Source, number_literal
from assay.proposers.mutate.python_grow_ops import band_place

CONFIG_FORMATS = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml"}
PLACEHOLDER = "__assay_tuned__"


@dataclass(frozen=True)
class NumberSite:
    """One tunable number: ``name`` (``params.json:threshold``, ``score.py:LIMIT``, ``score.py:priority#2``),
    its file, its value and how to write another value there (``write(text, value)`` -> new text or None).
    Several sites of one file are written from the highest ``order`` down (Python sites by byte offset, so an
    edit never moves the ones still to write)."""

    name: str
    path: str
    value: int | float
    write: Callable[[str, int | float], str | None]
    order: int = 0
    excluded: bool = False  # by default: its name says port, seed, index, id or version
    band_end: float | None = None  # for a number that places a band (see band_ends): the band's far end


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def number_sites(path: str, text: str) -> list[NumberSite]:
    """The tunable numbers of one file (none for a file of another kind or one that does not parse)."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix == ".py":
        return python_sites(path, text)
    if suffix in CONFIG_FORMATS:
        return config_number_sites(path, CONFIG_FORMATS[suffix], text)
    return []


def config_number_sites(path: str, kind: str, text: str) -> list[NumberSite]:
    """Numbers in a config file's values and lists."""
    found: list[NumberSite] = []
    for site in config_sites(kind, text):
        excluded = site.key is not None and excluded_name(site.key)
        if isinstance(site.value, list):
            for index, item in enumerate(site.value):
                if _number(item):
                    label = f"{site.label}[{index}]"
                    write = _config_writer(kind, site.label, index)
                    found.append(NumberSite(f"{path}:{label}", path, item, write, excluded=excluded))
        elif _number(site.value):
            write = _config_writer(kind, site.label, None)
            found.append(NumberSite(f"{path}:{site.label}", path, site.value, write, excluded=excluded))
    return found


def _config_writer(kind: str, label: str, index: int | None) -> Callable[[str, int | float], str | None]:
    def write(text: str, value: int | float) -> str | None:
        site = next((s for s in config_sites(kind, text) if s.label == label), None)
        if site is None:
            return None
        if index is None:
            return site.write(value)
        if not isinstance(site.value, list) or index >= len(site.value):
            return None
        return site.write([*site.value[:index], value, *site.value[index + 1 :]])

    return write


@dataclass(frozen=True)
class _PySpan:
    start: int
    end: int
    negative: bool


def python_sites(path: str, text: str) -> list[NumberSite]:
    """Numeric literals of a Python file: module constants (``NAME = 3.5``) by name, the rest numbered within
    their function (``priority#1``), or the module (``#1``)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    src = Source(text, tree)
    spans: list[tuple[str, _PySpan, int | float, bool, float | None]] = []
    claimed: set[int] = set()
    for stmt in tree.body:
        target, value = _constant_assignment(stmt)
        if target is None or value is None:
            continue
        number = number_literal(value)
        if number is not None:
            spans.append((target, _span(src, value), number, excluded_name(target), None))
            claimed.update(id(n) for n in ast.walk(value))
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.Subscript) for n in ast.walk(node.slice)}
    skip |= {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.keyword) and node.arg and excluded_name(node.arg)
        for n in ast.walk(node.value)
    }
    gains = {
        id(side)
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)
        for side in (node.left, node.right)
    }
    named = _named_values(tree)
    ends = band_ends(tree)
    counters: dict[str, int] = {}
    for scope, node in _literals(tree):
        if id(node) in claimed or id(node) in skip:
            continue
        number = number_literal(node)
        if number is None or (
            number in (0, 1) and id(node) not in named and not _gain(number, id(node) in gains)
        ):
            continue
        claimed.update(id(n) for n in ast.walk(node))
        counters[scope] = counters.get(scope, 0) + 1
        spans.append((f"{scope}#{counters[scope]}", _span(src, node), number, False, ends.get(id(node))))
    return [
        NumberSite(f"{path}:{label}", path, number, _python_writer(span), span.start, excluded, end)
        for label, span, number, excluded, end in spans
    ]


def band_ends(tree: ast.AST) -> dict[int, float]:
    """For each number literal that places a band, by its node's id, the band's far end: the start ``c`` and the
    width ``w`` of ``0 < s - c < w`` (as a guard writes a band) give ``c + w``; the centre ``c`` and the half-width
    ``h`` of ``abs(s - c) < h`` (its elementwise form) give ``c + h``. Only where both numbers are literals."""
    found: dict[int, float] = {}
    for node in ast.walk(tree):
        parts = band_place(node) if isinstance(node, ast.Compare) else None
        if parts is None:
            continue
        start, width = (number_literal(part) for part in parts)
        if start is not None and width is not None:
            found[id(parts[0])] = found[id(parts[1])] = float(start + width)
    return found


def _named_values(tree: ast.AST) -> set[int]:
    """The ids of the literals a user wrote as a named parameter: a function's default (``spare=0.0``), a class
    attribute (``limit = 1``), an instance attribute set once to a float (``self.weight = 1.0``; ``self.n = 0``
    counts, and ``self.total = 0.0`` that a method adds to is state) and a keyword argument
    (``fit(alpha=0.0)``); one whose name says port, seed, index, id or version is not among them."""
    writes: dict[str, int] = {}  # how often each attribute name is written, an augmented write as two
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Attribute):
                    writes[target.attr] = writes.get(target.attr, 0) + (
                        2 if isinstance(node, ast.AugAssign) else 1
                    )
    pairs: list[tuple[str | None, ast.expr | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            given = [*node.args.posonlyargs, *node.args.args]
            pairs += zip(
                [a.arg for a in given[len(given) - len(node.args.defaults) :]],
                node.args.defaults,
                strict=True,
            )
            pairs += [(a.arg, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)]
        elif isinstance(node, ast.ClassDef):
            pairs += [_constant_assignment(stmt) for stmt in node.body]
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute)
        ):
            attr = node.targets[0].attr
            if isinstance(number_literal(node.value), float) and writes[attr] == 1:
                pairs.append((attr, node.value))
        elif isinstance(node, ast.keyword) and node.arg:
            pairs.append((node.arg, node.value))
    return {id(value) for name, value in pairs if name and value is not None and not excluded_name(name)}


def _gain(number: int | float, multiplies: bool) -> bool:
    """Whether a 0 or 1 is a knob all the same: a float 1.0 that multiplies something (``1.0 * error``) is a gain
    someone wrote to be set, where an int 1 is an offset, a count or an index."""
    return multiplies and type(number) is float and number == 1.0


def write_values(
    files: dict[str, str], sites: list[NumberSite], values: dict[str, int | float]
) -> dict[str, str]:
    """The files with ``values`` (by site name) written at their sites; only changed files are returned.
    Raises ValueError when a value cannot be written."""
    changed: dict[str, str] = {}
    for site in sorted(sites, key=lambda s: (s.path, -s.order)):
        if site.name not in values or values[site.name] == site.value:
            continue
        text = changed.get(site.path, files[site.path])
        new = site.write(text, values[site.name])
        if new is None:
            raise ValueError(f"cannot write {values[site.name]!r} at {site.name}")
        changed[site.path] = new
    return changed


def _constant_assignment(stmt: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return stmt.target.id, stmt.value
    return None, None


def _literals(tree: ast.Module) -> list[tuple[str, ast.expr]]:
    """(scope name, literal node) in source order; a negated literal is one node (the ``-`` included)."""
    found: list[tuple[str, ast.expr]] = []

    def visit(node: ast.AST, scope: str) -> None:
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return  # a docstring
        if isinstance(node, SCOPES):
            scope = f"{scope}.{node.name}" if scope else node.name
        if number_literal(node) is not None and isinstance(node, ast.expr):
            found.append((scope, node))
            return
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    visit(tree, "")
    return sorted(found, key=lambda item: (item[1].lineno, item[1].col_offset))


def _span(src: Source, node: ast.AST) -> _PySpan:
    return _PySpan(src.start(node), src.end(node), isinstance(node, ast.UnaryOp))


def _python_writer(span: _PySpan) -> Callable[[str, int | float], str | None]:
    def write(text: str, value: int | float) -> str | None:
        data = text.encode()
        token = repr(value)
        if value < 0 and not span.negative:
            token = f"({token})"
        changed = (data[: span.start] + token.encode() + data[span.end :]).decode()
        try:
            ast.parse(changed)
        except SyntaxError:
            return None
        return changed

    return write
