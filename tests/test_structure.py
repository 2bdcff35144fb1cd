"""The package's shape: no import cycle between its packages."""

from __future__ import annotations

import ast
import re
import typing
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "src" / "assay"


def _unit(path: Path) -> str:
    """The package (``loop``) or top-level module (``config``) a source file belongs to."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return "assay" if parts == ("__init__",) else parts[0]


def _imported(tree: ast.AST) -> Iterator[str]:
    """Every ``assay.*`` module imported anywhere in ``tree`` (a function's lazy imports too)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def import_graph() -> dict[str, dict[str, str]]:
    """unit -> {imported unit: the first file that imports it}."""
    graph: dict[str, dict[str, str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        unit = _unit(path)
        edges = graph.setdefault(unit, {})
        for module in _imported(ast.parse(path.read_text(encoding="utf-8"))):
            parts = module.split(".")
            if parts[0] == "assay" and len(parts) > 1 and parts[1] != unit:
                edges.setdefault(parts[1], str(path.relative_to(PACKAGE)))
    return graph


def cycles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one unit (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(unit: str) -> None:
        index[unit] = low[unit] = len(index)
        stack.append(unit)
        for other in graph.get(unit, {}):
            if other not in index:
                visit(other)
                low[unit] = min(low[unit], low[other])
            elif other in stack:
                low[unit] = min(low[unit], index[other])
        if low[unit] == index[unit]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == unit:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for unit in sorted(graph):
        if unit not in index:
            visit(unit)
    return found


def test_no_import_cycle_between_packages() -> None:
    graph = import_graph()
    assert {"cases", "checks", "loop", "proposers"} <= graph.keys()
    found = cycles(graph)
    explained = [
        " -> ".join(f"{a} ({graph[a][b]})" for a, b in zip(c, [*c[1:], c[0]], strict=True) if b in graph[a])
        for c in found
    ]
    assert found == [], explained


def test_the_cycle_finder_finds_one() -> None:
    # The check itself can fail: a two-unit loop and a three-unit loop beside an acyclic edge.
    graph = {"a": {"b": "a.py"}, "b": {"a": "b.py", "c": "b.py"}, "c": {"d": "c.py"}, "d": {"e": "d.py"}}
    graph["e"] = {"c": "e.py"}
    assert sorted(cycles(graph)) == [["a", "b"], ["c", "d", "e"]]


def public_classes() -> dict[str, list[str]]:
    """Each public top-level class name of the package, with the modules that define one."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                found.setdefault(node.name, []).append(str(path.relative_to(PACKAGE)))
    return found


def test_one_class_per_name() -> None:
    found = public_classes()
    assert {"Node", "RunView", "Gate"} <= found.keys()
    assert {name: where for name, where in found.items() if len(where) > 1} == {}


def test_the_event_kinds_the_docs_list_are_the_unions() -> None:
    from assay.loop.events import Event

    union = typing.get_args(typing.get_args(Event)[0])
    kinds = {typing.get_args(cls.model_fields["type"].annotation)[0] for cls in union}
    docs = (PACKAGE.parents[1] / "docs" / "evolve.md").read_text(encoding="utf-8")
    listed = re.search(r"Its events are typed \(([^;]*);", docs)
    assert listed is not None, "docs/evolve.md no longer lists the event kinds"
    assert set(re.findall(r"`(\w+)`", listed.group(1))) == kinds and len(kinds) == 14
