"""Layer 2 (core) Python operators: swap, delete or duplicate one statement; negate an if-condition or swap
an if's branches. Blocks never become empty and docstrings and ``__future__`` imports stay where they are.
"""

from __future__ import annotations

import ast
import copy
import random

from assay.proposers.mutate.base import shorten
from assay.proposers.mutate.pysource import PyChange, Source, SourceEdit, replace_node

NOT_DELETED = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
)
NOT_DUPLICATED = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Return, ast.Raise,
    ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal,
)  # fmt: skip


def blocks(tree: ast.AST) -> list[list[ast.stmt]]:
    """Every statement list in the tree (bodies, else branches, finally blocks), in walk order."""
    found = []
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                found.append(block)
    return found


def is_pinned(block: list[ast.stmt], index: int) -> bool:
    """A docstring or a ``from __future__`` import: statements whose position matters."""
    stmt = block[index]
    if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
        return True
    return (
        index == 0
        and isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def first_line(src: Source, node: ast.AST) -> str:
    return shorten(src.segment(node).splitlines()[0])


def swap_in_block(src: Source, block: list[ast.stmt], i: int) -> list[SourceEdit]:
    """Swap ``block[i]`` and ``block[i + 1]`` in the tree; the edit swaps their source text."""
    a, b = block[i], block[i + 1]
    edits = [
        SourceEdit(src.start(a), src.stmt_end(a), src.stmt_segment(b)),
        SourceEdit(src.start(b), src.stmt_end(b), src.stmt_segment(a)),
    ]
    block[i], block[i + 1] = b, a
    return edits


def swap_statements(src: Source, rng: random.Random) -> PyChange | None:
    """Swap two adjacent statements of one block."""
    found = [
        (block, i) for block in blocks(src.tree) for i in range(len(block) - 1)
        if not is_pinned(block, i) and not is_pinned(block, i + 1)
        and ast.dump(block[i]) != ast.dump(block[i + 1])
    ]  # fmt: skip
    if not found:
        return None
    block, i = rng.choice(found)
    a, b = block[i], block[i + 1]
    description = (
        f"swapped statements `{first_line(src, a)}` and `{first_line(src, b)}` {src.where(a.lineno)}"
    )
    return PyChange(description, [swap_in_block(src, block, i)])


def delete_statement(src: Source, rng: random.Random) -> PyChange | None:
    """Delete one statement that is not the last of its block (the last one often carries the result),
    nor a definition, import or scope declaration."""
    found = [
        (block, i) for block in blocks(src.tree) for i in range(len(block) - 1)
        if not is_pinned(block, i) and not isinstance(block[i], NOT_DELETED)
    ]  # fmt: skip
    if not found:
        return None
    block, i = rng.choice(found)
    stmt = block.pop(i)
    description = f"deleted statement `{first_line(src, stmt)}` {src.where(stmt.lineno)}"
    return PyChange(description, [[SourceEdit(src.start(stmt), src.start(block[i]), "")]])


def duplicate_statement(src: Source, rng: random.Random) -> PyChange | None:
    """Repeat one statement right after itself (not definitions, imports or jumps, where it would do nothing)."""
    found = [
        (block, i) for block in blocks(src.tree) for i, stmt in enumerate(block)
        if not isinstance(stmt, NOT_DUPLICATED) and not is_pinned(block, i)
    ]  # fmt: skip
    if not found:
        return None
    block, i = rng.choice(found)
    stmt = block[i]
    block.insert(i + 1, copy.deepcopy(stmt))
    description = f"duplicated statement `{first_line(src, stmt)}` {src.where(stmt.lineno)}"
    indent = src.indent(stmt)
    plans = (
        [[SourceEdit(src.stmt_end(stmt), src.stmt_end(stmt), f"\n{indent}{src.stmt_segment(stmt)}")]]
        if indent is not None
        else []
    )
    return PyChange(description, plans)


def negate_if(src: Source, rng: random.Random) -> PyChange | None:
    """Negate one if-condition (``c`` becomes ``not c``; ``not c`` becomes ``c``)."""
    found = [n for n in ast.walk(src.tree) if isinstance(n, ast.If)]
    if not found:
        return None
    node = rng.choice(found)
    test = node.test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        node.test = test.operand
    else:
        node.test = ast.UnaryOp(ast.Not(), test)
    description = f"negated if-condition `{shorten(ast.unparse(test))}` {src.where(node.lineno)}"
    return PyChange(description, replace_node(src, test, node.test))


def _is_elif(src: Source, node: ast.If) -> bool:
    if len(node.orelse) != 1 or not isinstance(node.orelse[0], ast.If):
        return False
    line_start = src.line_starts[node.orelse[0].lineno - 1]
    return src.data[line_start:].lstrip().startswith(b"elif")


def swap_branches(src: Source, rng: random.Random) -> PyChange | None:
    """Exchange the bodies of an ``if``/``else`` (the condition stays)."""
    found = [n for n in ast.walk(src.tree) if isinstance(n, ast.If) and n.orelse and not _is_elif(src, n)]
    if not found:
        return None
    node = rng.choice(found)
    body = (src.start(node.body[0]), src.stmt_end(node.body[-1]))
    orelse = (src.start(node.orelse[0]), src.stmt_end(node.orelse[-1]))
    edits = [
        SourceEdit(*body, src.data[orelse[0] : orelse[1]].decode()),
        SourceEdit(*orelse, src.data[body[0] : body[1]].decode()),
    ]
    node.body, node.orelse = node.orelse, node.body
    description = (
        f"swapped the if/else branches of `if {shorten(ast.unparse(node.test))}` {src.where(node.lineno)}"
    )
    return PyChange(description, [edits])
