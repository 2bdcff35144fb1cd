"""``py.combine``: combine two of a function's own names with each other, not with a new constant.

Many heuristics gain most from a relation between their inputs: value per unit of weight (the greedy knapsack),
weight per unit of time (Smith's rule), the room left after an item (best fit). Where a returned value reads a
name, that read becomes a combination of it with another name the function has at that ``return``; a returned
value that reads no name at all (``return 0.0``) becomes a combination of two of them. Names that hold
functions (called or defined in the function) and names bound inside a lambda or a comprehension are left
alone. The forms are ``x / y``, ``y / x``, ``x * y``, ``x - y``, ``y - x``, ``x + y``, ``min(x, y)`` and
``max(x, y)``; a divisor is written ``(y or 1)`` so that a zero does not crash a case. A sum or a difference with a name the value already reads is not drawn:
that only reweights the name, which a term with a constant (``py.add_term``) and tuning already do.
"""

from __future__ import annotations

import ast
import random

from assay.proposers.mutate.base import shorten
from assay.proposers.mutate.pysource import FUNCTIONS, PyChange, Source, replace_node
from assay.proposers.mutate.python_arrays import NO_ARRAYS, Arrays
from assay.proposers.mutate.python_grow_ops import ReturnSite, reads_of, return_sites
from assay.proposers.mutate.python_ops import substitute, zero_guarded

FORMS = ("x / y", "y / x", "x * y", "x - y", "y - x", "x + y", "min", "max")
REWEIGHTING = frozenset({"x - y", "y - x", "x + y"})


def _name(operand: str) -> ast.expr:
    """A name, or a total of names (:func:`total`), as an expression."""
    first, *rest = members(operand)
    node: ast.expr = ast.Name(first, ast.Load())
    for name in rest:
        node = ast.BinOp(node, ast.Add(), ast.Name(name, ast.Load()))
    return node


def _safe_divisor(name: str, arrays: Arrays) -> ast.expr:
    """``(y or 1)``; an array as it is (``(bins or 1)`` raises, and numpy divides by 0 without raising)."""
    divisor = _name(name)
    return divisor if arrays.reads(divisor) else zero_guarded(divisor)


def total(names: list[str]) -> str:
    """Several names as one operand of a form: their sum, written ``a + b``."""
    return " + ".join(names)


def members(operand: str) -> list[str]:
    """The names of an operand: the one name, or those a :func:`total` sums."""
    return operand.split(" + ")


def combined(x: str, y: str, form: str, arrays: Arrays = NO_ARRAYS) -> ast.expr | None:
    """The expression of ``form`` (one of :data:`FORMS`) over ``x`` and ``y``, each a name or a total of names
    (:func:`total`); elementwise where one holds an array of ``arrays`` (``np.minimum``, an unguarded divisor),
    None for a ``min`` or ``max`` of an array in a module with no name for numpy."""
    if form in ("min", "max"):
        operands = [_name(x), _name(y)]
        if any(arrays.reads(o) for o in operands):
            return arrays.call(f"{form}imum", operands)
        return ast.Call(_name(form), operands, [])
    if form == "x / y":
        return ast.BinOp(_name(x), ast.Div(), _safe_divisor(y, arrays))
    if form == "y / x":
        return ast.BinOp(_name(y), ast.Div(), _safe_divisor(x, arrays))
    left, right = (y, x) if form == "y - x" else (x, y)
    op: ast.operator = {"x * y": ast.Mult(), "x - y": ast.Sub(), "y - x": ast.Sub(), "x + y": ast.Add()}[form]
    return ast.BinOp(_name(left), op, _name(right))


def value_names(site: ReturnSite) -> list[str]:
    """The site's names that hold values: not a function the function calls or defines (``g`` in ``g(b)``)."""
    called = {
        n.func.id for n in ast.walk(site.function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    defined = {n.name for n in ast.walk(site.function) if isinstance(n, FUNCTIONS) and n is not site.function}
    return [name for name in site.names if name not in called | defined]


def combine(src: Source, rng: random.Random) -> PyChange | None:
    """Replace a name read in a returned value with a combination of it and another of the function's names;
    or, in a returned value that reads none, the whole value with a combination of two of them."""
    sites = [(s, value_names(s)) for s in return_sites(src)]
    sites = [(s, names) for s, names in sites if len(names) >= 2]
    if not sites:
        return None
    site, names = rng.choice(sites)
    value = site.value
    reads = reads_of(value, names)
    read_ids = {n.id for n in reads}
    if reads:
        old: ast.expr = rng.choice(reads)
        x = old.id  # type: ignore[attr-defined]
        y = rng.choice([n for n in names if n != x])
    elif any(isinstance(n, ast.Name) for n in ast.walk(value)):
        return None  # it reads names of its own (a comprehension's): not a value to replace wholesale
    else:
        old = value
        x, y = rng.sample(names, 2)
    forms = [f for f in FORMS if not (f in REWEIGHTING and y in read_ids)]
    new = combined(x, y, rng.choice(forms), site.arrays)
    if new is None:
        return None
    plans = replace_node(src, old, new)
    parent = next(p for p in ast.walk(site.ret) if any(c is old for c in ast.iter_child_nodes(p)))
    substitute(parent, old, new)
    return PyChange(
        f"combined `{x}` with `{y}` as `{shorten(ast.unparse(new))}` {src.where(site.ret.lineno)}", plans
    )
