"""Guarded cases written as expressions, where a statement ``if test: return case`` cannot go: on numpy arrays,
``np.where(test, case, E)`` (:mod:`~assay.proposers.mutate.python_arrays`); in the element of a returned
comprehension (or of one a returned ``np.array(...)``, ``list(...)`` or ``tuple(...)`` is made of),
``case if test else E``. Either is a case as ``py.guard`` writes one only when its case is built
from the value under it (``E - 100``, ``E * 2``): a user's own ``np.where(fits, scores, -np.inf)`` or
``a if a > 0 else 0`` is not one, and no operator treats it as one.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator

from assay.proposers.mutate.pysource import FUNCTIONS

COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp)
# Calls that make a collection of a comprehension's elements, in order: ``list(...)``, ``np.array([...])``.
MAKERS = frozenset({"list", "tuple", "array", "asarray", "fromiter"})


def _made_of(value: ast.expr) -> ast.expr | None:
    """What a collection is made of when ``value`` makes one (``scores`` in ``np.array(scores)``, the
    comprehension in ``list(... for ...)``), None for any other value."""
    if isinstance(value, ast.Call) and value.args and isinstance(value.func, ast.Name | ast.Attribute):
        name = value.func.id if isinstance(value.func, ast.Name) else value.func.attr
        if name in MAKERS:
            return value.args[0]
    return None


def comprehension(value: ast.expr) -> ast.ListComp | ast.GeneratorExp | None:
    """The comprehension whose elements a returned ``value`` holds: ``value`` itself, or the one a collection is
    made of (``np.array([...])``, ``list(... for ...)``, ``tuple(...)``); None for any other value."""
    made = _made_of(value) or value
    return made if isinstance(made, COMPREHENSIONS) else None


def scored(value: ast.expr) -> ast.expr:
    """What a returned ``value`` scores by: the element of the comprehension it holds (one value per element,
    ``-(b - item)`` in ``[-(b - item) for b in bins]`` or ``np.array([...])``), else the value itself."""
    found = comprehension(value)
    return found.elt if found is not None else value


def built_list(value: ast.expr) -> str | None:
    """The name of the list a returned ``value`` is (``scores``) or is made of (``np.array(scores)``,
    ``list(scores)``), None for any other value. A list built in a loop holds what the loop appends to it."""
    made = _made_of(value) or value
    return made.id if isinstance(made, ast.Name) else None


def appends(function: ast.AST, ret: ast.Return) -> list[ast.Expr]:
    """The statements ``acc.append(X)`` in a loop of ``function`` before ``ret``, when ``ret`` returns the list
    ``acc`` they build (``return scores``, ``return np.array(scores)``): one score per element, as a returned
    comprehension holds them. Not those of a function defined inside ``function``, nor an append of a tuple or
    another collection written out (``(b, score)``: a record, not a number)."""
    name = built_list(ret.value) if ret.value is not None else None
    if name is None:
        return []
    found: list[ast.Expr] = []
    for node, looped in own_nodes(function):
        if (
            looped
            and isinstance(node, ast.Expr)
            and node.lineno < ret.lineno
            and isinstance(call := node.value, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "append"
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == name
            and len(call.args) == 1
            and not isinstance(
                call.args[0], ast.Starred | ast.Tuple | ast.List | ast.Set | ast.Dict | ast.JoinedStr
            )
            and not call.keywords
        ):
            found.append(node)
    return sorted(found, key=lambda n: n.lineno)


def own_nodes(function: ast.AST) -> Iterator[tuple[ast.AST, bool]]:
    """The nodes of ``function`` outside the functions, lambdas and classes defined in it, in the order
    ``ast.walk`` gives them, each with whether it is inside a loop."""
    pending: deque[tuple[ast.AST, bool]] = deque((child, False) for child in ast.iter_child_nodes(function))
    while pending:
        node, looped = pending.popleft()
        if isinstance(node, (*FUNCTIONS, ast.Lambda, ast.ClassDef)):
            continue
        yield node, looped
        inside = looped or isinstance(node, ast.For | ast.AsyncFor | ast.While)
        pending.extend((child, inside) for child in ast.iter_child_nodes(node))


def scored_values(tree: ast.AST) -> Iterator[tuple[ast.Return | ast.Expr, ast.expr]]:
    """Each statement that gives a score and the value it gives: a return and what it scores by (:func:`scored`),
    and each ``acc.append(X)`` that builds a returned list (:func:`appends`) with its ``X``."""
    for function in ast.walk(tree):
        if not isinstance(function, FUNCTIONS):
            continue
        for node, _ in own_nodes(function):
            if isinstance(node, ast.Return) and node.value is not None:
                yield node, scored(node.value)
                for stmt in appends(function, node):
                    assert isinstance(stmt.value, ast.Call)
                    yield stmt, stmt.value.args[0]


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
