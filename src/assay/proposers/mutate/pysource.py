"""Applying an AST mutation to Python source while keeping the rest of the file as written.

An operator changes the tree in place and proposes text edits (plans, most faithful first). A plan is used
only if the edited source parses to the same tree as the mutated one; otherwise the whole file is rendered
with ``ast.unparse``, which keeps behaviour but drops comments and the original formatting.
"""

from __future__ import annotations

import ast
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from assay.proposers.mutate.base import Mutation, first_changed_line

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (*FUNCTIONS, ast.ClassDef)


@dataclass(frozen=True)
class SourceEdit:
    """Replace the UTF-8 bytes ``start:end`` of the source with ``text``."""

    start: int
    end: int
    text: str


@dataclass
class PyChange:
    """What an operator did: a one-line description and alternative edit plans."""

    description: str
    plans: list[list[SourceEdit]] = field(default_factory=list)


class Source:
    """The original text with conversions from ast positions (line, UTF-8 column) to byte offsets."""

    def __init__(self, text: str, tree: ast.Module) -> None:
        self.text = text
        self.data = text.encode()
        self.tree = tree
        self.line_starts = [0]
        index = self.data.find(b"\n")
        while index >= 0:
            self.line_starts.append(index + 1)
            index = self.data.find(b"\n", index + 1)

    def start(self, node: ast.AST) -> int:
        """Byte offset where ``node`` begins (its first decorator, for a decorated definition)."""
        decorators = getattr(node, "decorator_list", None)
        line = decorators[0].lineno if decorators else node.lineno  # type: ignore[attr-defined]
        return self.line_starts[int(line) - 1] + int(node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.line_starts[node.end_lineno - 1] + int(node.end_col_offset)  # type: ignore[attr-defined]

    def stmt_end(self, node: ast.AST) -> int:
        """Where a statement ends, including a comment after it on its last line (it moves with it)."""
        end = self.end(node)
        line_end = self.data.find(b"\n", end)
        line_end = len(self.data) if line_end < 0 else line_end
        rest = self.data[end:line_end].rstrip(b"\r")
        return end + len(rest) if rest.strip().startswith(b"#") else end

    def segment(self, node: ast.AST) -> str:
        return self.data[self.start(node) : self.end(node)].decode()

    def stmt_segment(self, node: ast.AST) -> str:
        return self.data[self.start(node) : self.stmt_end(node)].decode()

    def indent(self, node: ast.AST) -> str | None:
        """The whitespace before ``node`` on its first line, or None when code precedes it there."""
        start = self.start(node)
        line_start = self.data.rfind(b"\n", 0, start) + 1
        prefix = self.data[line_start:start].decode()
        return prefix if not prefix.strip() else None

    def apply(self, edits: list[SourceEdit]) -> str:
        data = self.data
        last = len(data) + 1
        for edit in sorted(edits, key=lambda e: e.start, reverse=True):
            if edit.end > last:
                raise ValueError("overlapping edits")
            data = data[: edit.start] + edit.text.encode() + data[edit.end :]
            last = edit.start
        return data.decode()

    def where(self, line: int) -> str:
        """``in name() line N`` for the innermost function or class around ``line``, else ``line N``."""
        around = [
            node
            for node in ast.walk(self.tree)
            if isinstance(node, SCOPES) and node.lineno <= line <= (node.end_lineno or node.lineno)
        ]
        inner = max(around, key=lambda node: node.lineno, default=None)
        return f"in {inner.name}() line {line}" if inner else f"line {line}"


def number_literal(node: ast.AST) -> int | float | None:
    """The number a literal node stands for (``-2.5`` included; not a boolean, not infinite), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = number_literal(node.operand)
        return -inner if inner is not None and isinstance(node.operand, ast.Constant) else None
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
        and math.isfinite(node.value)
    ):
        return node.value
    return None


def replace_node(src: Source, original: ast.AST, new: ast.AST) -> list[list[SourceEdit]]:
    """Plans that put ``new`` where ``original`` was: bare, then parenthesised."""
    start, end, text = src.start(original), src.end(original), ast.unparse(new)
    return [[SourceEdit(start, end, text)], [SourceEdit(start, end, f"({text})")]]


def canonical(tree: ast.AST) -> str | None:
    try:
        return ast.dump(ast.parse(ast.unparse(ast.fix_missing_locations(tree))))
    except (SyntaxError, ValueError, TypeError, AttributeError, RecursionError):
        return None


PyOp = Callable[[Source, random.Random], PyChange | None]


def apply_python(op_name: str, op: PyOp, path: str, text: str, rng: random.Random) -> Mutation | None:
    """Run ``op`` on a fresh parse of ``text``; return the mutation if the tree changed and still compiles."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    before = canonical(tree)
    src = Source(text, tree)
    change = op(src, rng)
    if change is None:
        return None
    expected = canonical(tree)
    if expected is None or expected == before:
        return None
    new_text = _render(src, tree, change, expected)
    try:
        compile(new_text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    if new_text == text:
        return None
    site = f"{path}:{scope_at(ast.parse(text), first_changed_line(text, new_text)) or '<module>'}"
    return Mutation(path, new_text, f"python: {change.description}", op_name, (site,))


def scope_at(tree: ast.Module, line: int) -> str:
    """The qualified name of the innermost function or class around ``line`` (``Cache.evict``); '' outside any."""
    found = ""

    def visit(node: ast.AST, prefix: str) -> None:
        nonlocal found
        for child in ast.iter_child_nodes(node):
            if isinstance(child, SCOPES) and child.lineno <= line <= (child.end_lineno or child.lineno):
                found = f"{prefix}{child.name}"
                visit(child, f"{found}.")

    visit(tree, "")
    return found


def _render(src: Source, tree: ast.Module, change: PyChange, expected: str) -> str:
    for plan in change.plans:
        if not plan:
            continue
        try:
            candidate = src.apply(plan)
            if canonical(ast.parse(candidate)) == expected:
                return candidate
        except (SyntaxError, ValueError, UnicodeDecodeError):
            continue
    return ast.unparse(tree) + "\n"
