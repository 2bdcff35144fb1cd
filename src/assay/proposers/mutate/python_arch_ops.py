"""Layer 3 (architecture) Python operators, kept modest: reorder definitions, swap call arguments or the
operands of a non-commutative operator, and make a function return a different value it already computes.
"""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Iterator

from assay.proposers.mutate.base import shorten
from assay.proposers.mutate.pysource import FUNCTIONS, PyChange, Source, SourceEdit, replace_node
from assay.proposers.mutate.python_ops import may_be_zero, zero_guard, zero_guarded
from assay.proposers.mutate.python_stmt_ops import blocks, swap_in_block

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
NON_COMMUTATIVE = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift)
DIVISIONS = (ast.Div, ast.FloorDiv, ast.Mod)


def _swap_segments(
    src: Source, a: ast.AST, b: ast.AST, wrap_a: bool = False, wrap_b: bool = False, guard_b: bool = False
) -> list[SourceEdit]:
    """Edits that exchange the source of ``a`` and ``b``, optionally parenthesising what moves into each slot
    (with ``guard_b``, writing what moves into ``b``'s as ``(a or 1)``)."""
    into_a, into_b = src.segment(b), src.segment(a)
    into_b = f"{into_b} or 1" if guard_b else into_b
    into_a, into_b = f"({into_a})" if wrap_a else into_a, f"({into_b})" if wrap_b else into_b
    return [SourceEdit(src.start(a), src.end(a), into_a), SourceEdit(src.start(b), src.end(b), into_b)]


def reorder_definitions(src: Source, rng: random.Random) -> PyChange | None:
    """Swap two adjacent function or class definitions of one block."""
    found = [
        (block, i) for block in blocks(src.tree) for i in range(len(block) - 1)
        if isinstance(block[i], DEFINITIONS) and isinstance(block[i + 1], DEFINITIONS)
    ]  # fmt: skip
    if not found:
        return None
    block, i = rng.choice(found)
    a, b = block[i], block[i + 1]
    description = f"moved {b.name}() (line {b.lineno}) before {a.name}() (line {a.lineno})"  # type: ignore[attr-defined]
    return PyChange(description, [swap_in_block(src, block, i)])


def swap_arguments(src: Source, rng: random.Random) -> PyChange | None:
    """Swap two adjacent positional arguments of one call."""
    found = [
        (n, i) for n in ast.walk(src.tree) if isinstance(n, ast.Call) for i in range(len(n.args) - 1)
        if not isinstance(n.args[i], ast.Starred) and not isinstance(n.args[i + 1], ast.Starred)
        and ast.dump(n.args[i]) != ast.dump(n.args[i + 1])
    ]  # fmt: skip
    if not found:
        return None
    call, i = rng.choice(found)
    a, b = call.args[i], call.args[i + 1]
    edits = _swap_segments(src, a, b)
    call.args[i], call.args[i + 1] = b, a
    description = f"swapped arguments {i + 1} and {i + 2} of `{shorten(ast.unparse(call.func))}(...)` {src.where(call.lineno)}"
    return PyChange(description, [edits])


def swap_operands(src: Source, rng: random.Random) -> PyChange | None:
    """Swap the operands of one non-commutative operator (``a - b`` becomes ``b - a``) or one comparison. A
    division's new divisor is written ``(a or 1)`` unless it is a number other than 0, is guarded already, or holds
    a numpy array (as ``py.arithmetic`` writes a new division): ``(remaining - item) / c`` turned round would crash
    on every bin the item fills exactly."""
    found: list[ast.BinOp | ast.Compare] = [
        n for n in ast.walk(src.tree)
        if (isinstance(n, ast.BinOp) and isinstance(n.op, NON_COMMUTATIVE) and ast.dump(n.left) != ast.dump(n.right))
        or (isinstance(n, ast.Compare) and len(n.ops) == 1 and ast.dump(n.left) != ast.dump(n.comparators[0]))
    ]  # fmt: skip
    if not found:
        return None
    node = rng.choice(found)
    before = shorten(ast.unparse(node))
    left, right = (node.left, node.right) if isinstance(node, ast.BinOp) else (node.left, node.comparators[0])
    description = f"swapped the operands of `{before}` {src.where(node.lineno)}"
    guard = (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, DIVISIONS)
        and not zero_guard(left)
        and may_be_zero(src.tree, node, left)
    )
    plans = [
        _swap_segments(src, left, right, wrap_a, wrap_b, guard_b=guard)
        for wrap_a in (False, True)
        for wrap_b in (False, True)
    ]
    if guard:
        assert isinstance(node, ast.BinOp)
        original = copy.copy(node)
        node.left, node.right = right, zero_guarded(left)
        return PyChange(
            f"{description}, a divisor of 0 taken as 1", [*plans, *replace_node(src, original, node)]
        )
    if isinstance(node, ast.BinOp):
        node.left, node.right = right, left
    else:
        node.left, node.comparators = right, [left]
    return PyChange(description, plans)


def _own_nodes(func: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function's body, not descending into nested functions, lambdas or classes."""
    stack = list(reversed(getattr(func, "body", [])))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (*DEFINITIONS, ast.Lambda)):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _values_in(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[int, ast.expr]]:
    """(line, expression) pairs a function could return: its parameters, names it assigns, values it returns."""
    params = [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
    values: list[tuple[int, ast.expr]] = [
        (func.lineno, ast.Name(a.arg, ast.Load())) for a in params if a.arg not in ("self", "cls")
    ]
    for node in _own_nodes(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            values.append((node.lineno, ast.Name(node.id, ast.Load())))
        elif isinstance(node, ast.Return) and node.value is not None:
            values.append((node.lineno, node.value))
    return values


def return_variant(src: Source, rng: random.Random) -> PyChange | None:
    """Make one ``return`` give back another value the function already has (a parameter, an assigned name,
    or what another of its returns gives)."""
    found = []
    for func in (n for n in ast.walk(src.tree) if isinstance(n, FUNCTIONS)):
        values = _values_in(func)
        for ret in (n for n in _own_nodes(func) if isinstance(n, ast.Return) and n.value is not None):
            current = ast.dump(ret.value)  # type: ignore[arg-type]
            seen: dict[str, ast.expr] = {}
            for line, expr in values:
                key = ast.dump(expr)
                if key != current and not (isinstance(expr, ast.Name) and line > ret.lineno):
                    seen.setdefault(key, expr)
            found += [(func, ret, expr) for expr in seen.values()]
    if not found:
        return None
    _, ret, expr = rng.choice(found)
    old = ret.value
    ret.value = expr
    description = (
        f"returned `{shorten(ast.unparse(expr))}` instead of `{shorten(ast.unparse(old))}` "  # type: ignore[arg-type]
        f"{src.where(ret.lineno)}"
    )
    return PyChange(description, replace_node(src, old, expr))  # type: ignore[arg-type]
