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

COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp, ast.DictComp)
# A comprehension, or the lambda of ``map(lambda b: ..., bins)``: one value per element.
Comprehension = ast.ListComp | ast.GeneratorExp | ast.DictComp | ast.Lambda
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


def _unsigned(value: ast.expr) -> ast.expr:
    """``value`` without a leading minus: ``-np.array(scores)`` holds the same elements, negated."""
    return value.operand if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) else value


def _collection(value: ast.expr) -> ast.expr:
    """What a returned ``value`` holds its elements in: what the collection it makes is made of (:func:`_made_of`,
    through a leading minus), else ``value`` itself."""
    return _made_of(_unsigned(value)) or value


def _mapped(value: ast.expr) -> tuple[ast.Lambda, list[ast.expr]] | None:
    """The lambda and what it is mapped over, when ``value`` is ``map(lambda b: ..., bins)``; else None."""
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "map"
        and len(value.args) >= 2
        and isinstance(function := value.args[0], ast.Lambda)
        and not value.keywords
    ):
        return function, value.args[1:]
    return None


def comprehension(value: ast.expr) -> Comprehension | None:
    """The comprehension whose elements a returned ``value`` holds: ``value`` itself (a dict comprehension's
    elements are its values, ``{i: -(b - item) for i, b in enumerate(bins)}``; ``map(lambda b: ..., bins)`` is
    one whose element is the lambda's body), or the one a collection is made of (``np.array([...])``,
    ``list(... for ...)``, ``tuple(...)``, or such a collection negated: ``-np.array([...])``); None for any other
    value."""
    made = _collection(value)
    if (mapped := _mapped(made)) is not None:
        return mapped[0]
    return made if isinstance(made, COMPREHENSIONS) else None


def comprehension_names(value: ast.expr) -> tuple[list[str], set[str]]:
    """The names bound per element by the comprehension a returned ``value`` holds (its loop variables, or the
    lambda's parameters) and the names of what it iterates (``bins`` in ``for b in bins``): ``([], set())`` when
    it holds none."""
    made = _collection(value)
    if (mapped := _mapped(made)) is not None:
        function, iterables = mapped
        loops = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    elif isinstance(made, COMPREHENSIONS):
        loops = [n.id for g in made.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)]
        iterables = [g.iter for g in made.generators]
    else:
        return [], set()
    return loops, {n.id for it in iterables for n in ast.walk(it) if isinstance(n, ast.Name)}


def element(found: Comprehension) -> ast.expr:
    """What a comprehension makes per element: its element, of a dict comprehension the value, of a mapped
    lambda its body."""
    if isinstance(found, ast.Lambda):
        return found.body
    return found.value if isinstance(found, ast.DictComp) else found.elt


def put_element(found: Comprehension, new: ast.expr) -> None:
    """Make ``new`` what ``found`` makes per element (:func:`element`)."""
    if isinstance(found, ast.Lambda):
        found.body = new
    elif isinstance(found, ast.DictComp):
        found.value = new
    else:
        found.elt = new


def scored(value: ast.expr) -> ast.expr:
    """What a returned ``value`` scores by: the element of the comprehension it holds (one value per element,
    ``-(b - item)`` in ``[-(b - item) for b in bins]`` or ``np.array([...])``), else the value itself."""
    found = comprehension(value)
    return element(found) if found is not None else value


def built_list(value: ast.expr) -> str | None:
    """The name of the list a returned ``value`` is (``scores``) or is made of (``np.array(scores)``,
    ``list(scores)``, ``-np.array(scores)``), None for any other value. A list built in a loop holds what the loop
    appends to it, or puts in it by index."""
    made = _collection(value)
    return made.id if isinstance(made, ast.Name) else None


# What a filled value may not be: a record or another collection written out (``(b, score)``), not a number.
WRITTEN_OUT = (ast.Starred, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.JoinedStr)


def filled(stmt: ast.Expr | ast.Assign) -> ast.expr:
    """The value a statement of :func:`appends` puts in the list: ``X`` in ``acc.append(X)`` or ``acc[i] = X``."""
    if isinstance(stmt, ast.Assign):
        return stmt.value
    assert isinstance(stmt.value, ast.Call)
    return stmt.value.args[0]


def fill(stmt: ast.Expr | ast.Assign, new: ast.expr) -> None:
    """Make ``new`` the value ``stmt`` puts in the list (:func:`filled`)."""
    if isinstance(stmt, ast.Assign):
        stmt.value = new
    else:
        assert isinstance(stmt.value, ast.Call)
        stmt.value.args[0] = new


def filled_list(stmt: ast.Expr | ast.Assign) -> str:
    """The name of the list ``stmt`` fills (``acc``)."""
    if isinstance(stmt, ast.Assign):
        target = stmt.targets[0]
        assert isinstance(target, ast.Subscript)
        holder = target.value
    else:
        call = stmt.value
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        holder = call.func.value
    assert isinstance(holder, ast.Name)
    return holder.id


def _fills(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is ``name.append(X)`` or ``name[i] = X``, ``X`` a value written out as no collection."""
    if isinstance(node, ast.Assign):
        target = node.targets[0] if len(node.targets) == 1 else None
        return (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and target.value.id == name
            and not isinstance(target.slice, ast.Slice)  # ``acc[2:5] = ...`` puts in many
            and not isinstance(node.value, WRITTEN_OUT)
        )
    return (
        isinstance(node, ast.Expr)
        and isinstance(call := node.value, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "append"
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == name
        and len(call.args) == 1
        and not isinstance(call.args[0], WRITTEN_OUT)
        and not call.keywords
    )


def appends(function: ast.AST, ret: ast.Return) -> list[ast.Expr | ast.Assign]:
    """The statements ``acc.append(X)`` or ``acc[i] = X`` in a loop of ``function`` before ``ret``, when ``ret``
    returns the list ``acc`` they fill (``return scores``, ``return np.array(scores)``): one score per element,
    as a returned comprehension holds them. Not those of a function defined inside ``function``, nor one of a
    tuple or another collection written out (``(b, score)``: a record, not a number)."""
    name = built_list(ret.value) if ret.value is not None else None
    if name is None:
        return []
    found = [
        node
        for node, looped in own_nodes(function)
        if looped
        and isinstance(node, ast.Expr | ast.Assign)
        and node.lineno < ret.lineno
        and _fills(node, name)
    ]
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


def scored_values(tree: ast.AST) -> Iterator[tuple[ast.Return | ast.Expr | ast.Assign, ast.expr]]:
    """Each statement that gives a score and the value it gives: a return and what it scores by (:func:`scored`),
    and each ``acc.append(X)`` or ``acc[i] = X`` that fills a returned list (:func:`appends`) with its ``X``."""
    for function in ast.walk(tree):
        if not isinstance(function, FUNCTIONS):
            continue
        for node, _ in own_nodes(function):
            if isinstance(node, ast.Return) and node.value is not None:
                yield node, scored(node.value)
                for stmt in appends(function, node):
                    yield stmt, filled(stmt)


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
