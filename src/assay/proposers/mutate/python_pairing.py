"""Pairing: every form of combining a function's inputs at one place, tried in turn rather than drawn.

A start program often ignores one of its inputs (``priority(value, weight)`` returning ``value``), and the gain
is a relation between that input and one the program reads: value per unit of weight, the room left after an
item. ``py.combine`` draws one such form at a time among many operators, so a run may keep the first form that
helps a little (``value - weight``) and never meet the one that helps most. Pairing lists, for a function
parameter that the function never reads, each form (:data:`FORMS`) of it with each name a returned value
reads (or, where the value reads none, with another of the function's names), and with the total of two or more
such parameters (``value / (w1 + w2 or 1)``); and for a returned value that already pairs two names
(``value - weight``, ``min(a, b)``, ``x / (y or 1)``) or a name and a total, the other forms of that pair, with
the pairings of a parameter it still leaves unread (``value - w1`` kept, ``w2`` is next).
The proposer (:class:`assay.proposers.offline.OfflineProposer`) tries them one per generation in an order
drawn from its seed.
"""

from __future__ import annotations

import ast
import itertools
import random
from dataclasses import dataclass
from functools import partial

from assay.proposers.mutate.base import Mutation, shorten
from assay.proposers.mutate.pysource import PyChange, Source, apply_python, replace_node
from assay.proposers.mutate.python_combine_ops import FORMS, combined, members, total, value_names
from assay.proposers.mutate.python_grow_ops import ReturnSite, inputs, reads_of, return_sites
from assay.proposers.mutate.python_ops import substitute


@dataclass(frozen=True)
class Pairing:
    """One edit: at return site ``site``, the node ``node`` (an index into :func:`_targets`) becomes ``form``
    over ``x`` and ``y``."""

    site: int
    node: int
    x: str
    y: str
    form: str


def unread_parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The function's parameters that nothing in its body reads."""
    read = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return [p for p in inputs(function) if p not in read]


def _operand(node: ast.AST) -> str | None:
    """A form's operand: a bare name, or a total of distinct names (``w1 + w2``, as :func:`total` writes it)."""
    if isinstance(node, ast.Name):
        return node.id
    names: list[str] = []
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.right, ast.Name):
        names.insert(0, node.right.id)
        node = node.left
    if not isinstance(node, ast.Name) or not names:
        return None
    names.insert(0, node.id)
    return total(names) if len(set(names)) == len(names) else None


def _pair(node: ast.AST) -> tuple[str, str] | None:
    """The two operands ``node`` combines, when it is one of :data:`FORMS` over two names, or over a name and a
    total of other names."""
    operands: list[ast.AST]
    if isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id in ("min", "max"))
        or (isinstance(node.func, ast.Attribute) and node.func.attr in ("minimum", "maximum"))
    ):
        if len(node.args) != 2 or node.keywords:
            return None
        operands = list(node.args)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Div):
        right = node.right
        if isinstance(right, ast.BoolOp) and isinstance(right.op, ast.Or) and len(right.values) == 2:
            right = right.values[0]  # a safe divisor, ``(y or 1)``
        operands = [node.left, right]
    else:
        return None
    x, y = (_operand(o) for o in operands)
    if x is None or y is None:
        return None
    xs, ys = members(x), members(y)
    if set(xs) & set(ys) or (len(xs) > 1 and len(ys) > 1):
        return None  # a name on both sides, or a total with a total
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and len(xs) > 1:
        return None  # ``a + b + c`` is a sum, not a name paired with a total
    return x, y


def _targets(site: ReturnSite) -> list[ast.expr]:
    """The nodes of the returned value a pairing may replace: each read of a name, then each pair of names,
    in reading order."""
    value = site.value
    if not any(isinstance(n, ast.Name) for n in ast.walk(value)):
        return [value]  # a value that reads no name (``return 0.0``): the whole value
    reads: list[ast.expr] = list(reads_of(value, value_names(site)))
    pairs: list[ast.expr] = [n for n in ast.walk(value) if isinstance(n, ast.expr) and _pair(n) is not None]
    return reads + sorted(pairs, key=lambda n: (n.lineno, n.col_offset))


def pairings(src: Source, *, reform: bool) -> list[Pairing]:
    """The pairings of ``src`` in source order: those that bring in a parameter the function does not read,
    or (``reform``) the other forms of each pair of names a returned value holds, and those that bring in a
    parameter a returned value reading names still leaves unread."""
    found: list[Pairing] = []
    for s, site in enumerate(return_sites(src)):
        names = value_names(site)
        unread = [p for p in unread_parameters(site.function) if p in names]
        for t, node in enumerate(_targets(site)):
            pair = _pair(node)
            if pair is not None:
                if reform:
                    x, y = pair
                    current = ast.dump(node)
                    found += [
                        Pairing(s, t, x, y, form)
                        for form in FORMS
                        if (made := combined(x, y, form, site.arrays)) is not None
                        and ast.dump(made) != current
                    ]
            elif isinstance(node, ast.Name):
                # Inputs of one kind (a weight per dimension, a cost per resource) often count by their total.
                partners = [*unread, total(unread)] if len(unread) > 1 else unread
                found += [Pairing(s, t, node.id, y, form) for y in partners for form in FORMS]
            elif not reform:
                for x, y in itertools.combinations(names, 2):
                    if x in unread or y in unread:
                        found += [Pairing(s, t, x, y, form) for form in FORMS]
    return found


def _apply(pairing: Pairing, src: Source, rng: random.Random) -> PyChange | None:
    sites = return_sites(src)
    if pairing.site >= len(sites):
        return None
    site = sites[pairing.site]
    targets = _targets(site)
    if pairing.node >= len(targets):
        return None
    old = targets[pairing.node]
    new = combined(pairing.x, pairing.y, pairing.form, site.arrays)
    if new is None:
        return None
    plans = replace_node(src, old, new)
    if old is site.value:
        site.put(new)
    else:
        parent = next(p for p in ast.walk(site.ret) if any(c is old for c in ast.iter_child_nodes(p)))
        substitute(parent, old, new)
    return PyChange(
        f"paired `{pairing.x}` with `{pairing.y}` as `{shorten(ast.unparse(new))}` {src.where(site.ret.lineno)}",
        plans,
    )


def pairing(path: str, text: str, index: int, order: str, *, reform: bool) -> tuple[Mutation | None, int]:
    """The ``index``-th pairing (see :func:`pairings`) of ``text`` in the order the seed string ``order``
    draws, or the first after it that changes the program; and how many there are (None past the last)."""
    try:
        found = pairings(Source(text, ast.parse(text)), reform=reform)
    except (SyntaxError, ValueError):
        return None, 0
    for chosen in random.Random(order).sample(found, len(found))[index:]:
        made = apply_python("py.pair", partial(_apply, chosen), path, text, random.Random(0))
        if made is not None:
            return made, len(found)
    return None, len(found)
