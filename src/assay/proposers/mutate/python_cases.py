"""Guarded cases written as expressions, where a statement ``if test: return case`` cannot go: on numpy arrays,
``np.where(test, case, E)`` (:mod:`~assay.proposers.mutate.python_arrays`); in the element of a returned
comprehension (or of one a returned ``np.array(...)``, ``list(...)`` or ``tuple(...)`` is made of),
``case if test else E``. Either is a case as ``py.guard`` writes one only when its case is built
from the value under it (``E - 100``, ``E * 2``): a user's own ``np.where(fits, scores, -np.inf)`` or
``a if a > 0 else 0`` is not one, and no operator treats it as one.
"""

from __future__ import annotations

import ast

COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp)
# Calls that make a collection of a comprehension's elements, in order: ``list(...)``, ``np.array([...])``.
MAKERS = frozenset({"list", "tuple", "array", "asarray", "fromiter"})


def comprehension(value: ast.expr) -> ast.ListComp | ast.GeneratorExp | None:
    """The comprehension whose elements a returned ``value`` holds: ``value`` itself, or the one a collection is
    made of (``np.array([...])``, ``list(... for ...)``, ``tuple(...)``); None for any other value."""
    if isinstance(value, COMPREHENSIONS):
        return value
    if isinstance(value, ast.Call) and value.args and isinstance(value.args[0], COMPREHENSIONS):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in MAKERS:
            return value.args[0]
    return None


def scored(value: ast.expr) -> ast.expr:
    """What a returned ``value`` scores by: the element of the comprehension it holds (one value per element,
    ``-(b - item)`` in ``[-(b - item) for b in bins]`` or ``np.array([...])``), else the value itself."""
    found = comprehension(value)
    return found.elt if found is not None else value


def case_parts(node: ast.AST | None) -> tuple[ast.expr, ast.expr, ast.expr] | None:
    """(test, case, value) of a guarded case (see the module docstring), None for any other node. Of a case
    over other cases, the case is built from the value under them all."""
    if isinstance(node, ast.IfExp):
        test, case, value = node.test, node.body, node.orelse
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "where"
        and isinstance(node.func.value, ast.Name)
        and len(node.args) == 3
        and not node.keywords
        and not any(isinstance(a, ast.Starred) for a in node.args)
    ):
        test, case, value = node.args
    else:
        return None
    under = ast.dump(under_cases(value))
    if any(ast.dump(part) == under for part in ast.walk(case)):
        return test, case, value
    return None


def under_cases(value: ast.expr) -> ast.expr:
    """The value under the guarded cases over ``value`` (``value`` itself when it has none)."""
    while (parts := case_parts(value)) is not None:
        value = parts[2]
    return value
