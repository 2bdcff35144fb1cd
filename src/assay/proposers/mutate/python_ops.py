"""Layer 1 (surface) Python operators: one constant, comparison, arithmetic or boolean operator per call.

They change expressions only, never add or remove statements.
"""

from __future__ import annotations

import ast
import copy
import itertools
import math
import random
import re
from typing import TypeGuard

from assay.proposers.mutate.base import perturb_number
from assay.proposers.mutate.pysource import PyChange, Source, SourceEdit, number_literal, replace_node
from assay.proposers.mutate.python_arrays import arrays_at

COMPARE_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In,
}  # fmt: skip
ARITH_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
    ast.Pow: ast.Mult, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd, ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}  # fmt: skip
SYMBOLS: dict[type[ast.AST], str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
    ast.Is: r"is", ast.IsNot: r"is\s+not", ast.In: r"in", ast.NotIn: r"not\s+in", ast.Add: "+",
    ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Pow: "**", ast.BitAnd: "&",
    ast.BitOr: "|", ast.LShift: "<<", ast.RShift: ">>", ast.And: "and", ast.Or: "or",
}  # fmt: skip
WORD_OPS = (ast.Is, ast.IsNot, ast.In, ast.NotIn, ast.And, ast.Or)
SPELLING: dict[type[ast.AST], str] = {ast.IsNot: "is not", ast.NotIn: "not in"}


def _spelled(op: type[ast.AST]) -> str:
    return SPELLING.get(op, SYMBOLS[op])


def _token_pattern(op: type[ast.AST], suffix: str = "") -> re.Pattern[str]:
    if op in WORD_OPS:
        return re.compile(rf"(?<![\w.]){SYMBOLS[op]}(?!\w)")
    return re.compile(rf"(?<![-+*/%<>=!&|^@]){re.escape(SYMBOLS[op] + suffix)}(?![-+*/%<>=&|^@])")


def _token_edit(
    src: Source, left: ast.AST, right: ast.AST, old: type[ast.AST], new: str, suffix: str = ""
) -> list[SourceEdit]:
    """Replace the operator token between two operands, leaving everything else as written."""
    start, end = src.end(left), src.start(right)
    gap = src.data[start:end].decode()
    matches = list(_token_pattern(old, suffix).finditer(gap)) if "#" not in gap else []
    if len(matches) != 1:
        return []
    match = matches[0]
    offset = start + len(gap[: match.start()].encode())
    return [SourceEdit(offset, offset + len(match.group().encode()), new + suffix)]


def _is_stringy(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)
    )


def _is_sequence(node: ast.AST) -> bool:
    """A string or a list or tuple written out, whose ``*`` repeats and ``+`` joins (``[0.0] * len(bins)``): any
    other operator raises TypeError."""
    return _is_stringy(node) or isinstance(node, ast.List | ast.Tuple | ast.ListComp)


def substitute(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    """Put ``new`` where ``parent`` holds ``old``."""
    for name, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, name, new)
        elif isinstance(value, list):
            value[:] = [new if item is old else item for item in value]


def mutate_constant(src: Source, rng: random.Random) -> PyChange | None:
    """Perturb one number (or flip one True/False). A written ``-x`` is treated as the number -x."""
    parents = {id(child): node for node in ast.walk(src.tree) for child in ast.iter_child_nodes(node)}
    guards = {id(n.values[1]) for n in ast.walk(src.tree) if zero_guard(n)}
    found: list[tuple[ast.Constant, int | float]] = [
        (n, n.value)
        for n in ast.walk(src.tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, int | float)
        and (isinstance(n.value, bool) or math.isfinite(n.value))
        and id(n) not in guards
    ]
    if not found:
        return None
    node, value = rng.choice(found)
    parent = parents.get(id(node))
    target: ast.AST = node
    old = value
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub) and not isinstance(value, bool):
        target, old = parent, -value
    new = (not old) if isinstance(old, bool) else perturb_number(old, rng)
    replacement: ast.expr = ast.Constant(new)
    if isinstance(new, int | float) and not isinstance(new, bool) and new < 0:
        replacement = ast.UnaryOp(ast.USub(), ast.Constant(-new))
    substitute(parents[id(target)], target, replacement)
    description = f"replaced constant {old!r} with {new!r} {src.where(node.lineno)}"
    return PyChange(description, replace_node(src, target, replacement))


def mutate_compare(src: Source, rng: random.Random) -> PyChange | None:
    """Swap one comparison operator: < and <=, > and >=, == and !=, is and is not, in and not in."""
    found = [
        (n, i) for n in ast.walk(src.tree) if isinstance(n, ast.Compare) for i, op in enumerate(n.ops)
        if type(op) in COMPARE_SWAPS
    ]  # fmt: skip
    if not found:
        return None
    node, i = rng.choice(found)
    old, new = type(node.ops[i]), COMPARE_SWAPS[type(node.ops[i])]
    left = node.left if i == 0 else node.comparators[i - 1]
    token = _token_edit(src, left, node.comparators[i], old, _spelled(new))
    original = copy.copy(node)
    node.ops = [*node.ops[:i], new(), *node.ops[i + 1 :]]
    description = f"changed comparison {_spelled(old)} to {_spelled(new)} {src.where(node.lineno)}"
    return PyChange(description, [token, *replace_node(src, original, node)])


def mutate_arithmetic(src: Source, rng: random.Random) -> PyChange | None:
    """Swap one arithmetic operator (+ and -, * and /, // to /, ** to *, ...), also in augmented assignments. A
    ``*`` turned ``/`` divides by ``(y or 1)`` unless ``y`` is a number other than 0 or holds a numpy array."""
    found: list[ast.BinOp | ast.AugAssign] = [
        n for n in ast.walk(src.tree)
        if (isinstance(n, ast.BinOp) and type(n.op) in ARITH_SWAPS and not _is_sequence(n.left)
            and not _is_sequence(n.right))
        or (isinstance(n, ast.AugAssign) and type(n.op) in ARITH_SWAPS and not _is_sequence(n.value))
    ]  # fmt: skip
    if not found:
        return None
    node = rng.choice(found)
    old, new = type(node.op), ARITH_SWAPS[type(node.op)]
    description = f"changed operator {SYMBOLS[old]} to {SYMBOLS[new]} {src.where(node.lineno)}"
    if isinstance(node, ast.AugAssign):
        token = _token_edit(src, node.target, node.value, old, SYMBOLS[new], "=")
        description += " (augmented assignment)"
    else:
        token = _token_edit(src, node.left, node.right, old, SYMBOLS[new])
    original = copy.copy(node)
    node.op = new()
    divisor = node.value if isinstance(node, ast.AugAssign) else node.right
    if old is ast.Mult and may_be_zero(src.tree, node, divisor):
        # A new division: a factor that is sometimes 0 would crash the instances that have one, which the dev
        # cases may not show (py.combine writes its divisors so too).
        start, end = src.start(divisor), src.end(divisor)
        wrapped = [SourceEdit(start, start, "("), SourceEdit(end, end, " or 1)")]
        safe = zero_guarded(divisor)
        if isinstance(node, ast.AugAssign):
            node.value = safe
        else:
            node.right = safe
        plans = [token + wrapped] if token else []
        return PyChange(
            f"{description}, a divisor of 0 taken as 1", [*plans, *replace_node(src, original, node)]
        )
    return PyChange(description, [token, *replace_node(src, original, node)])


def may_be_zero(tree: ast.Module, node: ast.expr | ast.stmt, divisor: ast.expr) -> bool:
    """Whether a new ``divisor`` of ``node`` could be 0 and raise: it is not a number other than 0, and holds no
    numpy array (numpy divides an array by 0 without raising)."""
    return number_literal(divisor) in (None, 0) and not arrays_at(tree, node).reads(divisor)


def zero_guarded(divisor: ast.expr) -> ast.BoolOp:
    """``(divisor or 1)``: a divisor that does not crash on a 0."""
    return ast.BoolOp(ast.Or(), [divisor, ast.Constant(1)])


def zero_guard(node: ast.AST) -> TypeGuard[ast.BoolOp]:
    """Whether ``node`` is a divisor written ``(y or 1)`` (as the operators write one so that a 0 does not crash):
    no material for the constant and boolean edits, whose ``(y or 2)`` or ``(y and 1)`` mean nothing."""
    return (
        isinstance(node, ast.BoolOp)
        and isinstance(node.op, ast.Or)
        and len(node.values) == 2
        and isinstance(node.values[1], ast.Constant)
        and type(node.values[1].value) is int
        and node.values[1].value == 1
    )


def mutate_boolean(src: Source, rng: random.Random) -> PyChange | None:
    """Swap ``and`` and ``or`` in one boolean expression."""
    found = [n for n in ast.walk(src.tree) if isinstance(n, ast.BoolOp) and not zero_guard(n)]
    if not found:
        return None
    node = rng.choice(found)
    old = type(node.op)
    new = ast.Or if old is ast.And else ast.And
    token: list[SourceEdit] = []
    for left, right in itertools.pairwise(node.values):
        token += _token_edit(src, left, right, old, SYMBOLS[new])
    plans = [token] if len(token) == len(node.values) - 1 else []
    original = copy.copy(node)
    node.op = new()
    description = f"changed {SYMBOLS[old]} to {SYMBOLS[new]} {src.where(node.lineno)}"
    return PyChange(description, plans + replace_node(src, original, node))
