"""Functions over numpy arrays, as FunSearch writes its bin packing (``priority(item, bins: np.ndarray)``, one
score per bin at once): where the operators' scalar forms would crash, the elementwise ones.

``if 0 < bins - item - 5 < 15:`` asks an array for one truth value and raises; ``min(bins, 2)`` and
``(bins or 1)`` do too. In a function that has a parameter annotated as an array (``np.ndarray``,
``NDArray[...]``, ``ArrayLike``), the names that hold arrays are those parameters and the locals assigned from
them; an edit whose test or operand reads one is written elementwise with the module's own numpy name: a guarded
case becomes ``return np.where(test, case, value)``, a band ``abs(s - centre) < half`` (written by
:mod:`~assay.proposers.mutate.python_grow_ops`: one subject and two numbers, so tuning cannot cross its bounds),
``min``/``max`` become ``np.minimum``/``np.maximum``, and a division by an array is left unguarded (numpy gives
``inf`` for a 0 instead of raising). A function with no such annotation is left as the scalar operators write
it, since nothing in an unannotated one says what its inputs hold, unless a run has seen evidence that they are
arrays (:func:`arrays_assumed`): then, in a module that imports numpy, every parameter without an annotation
counts as one (numpy's elementwise forms take a plain number too).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from assay.proposers.mutate.pysource import FUNCTIONS

ARRAY_ANNOTATION = re.compile(r"\b(?:ndarray|NDArray|ArrayLike)\b")
_ASSUMED: ContextVar[bool] = ContextVar("arrays_assumed", default=False)


@contextmanager
def arrays_assumed(assumed: bool = True) -> Iterator[None]:
    """Within the block, the parameters of a function with no array annotation count as arrays when its module
    imports numpy (:func:`arrays_of`): for a run whose scalar edits of such a function crashed."""
    token = _ASSUMED.set(assumed)
    try:
        yield
    finally:
        _ASSUMED.reset(token)


@dataclass(frozen=True)
class Arrays:
    """The names of a function that hold numpy arrays, and the module's name for numpy (None when the module
    does not import it: an elementwise form that needs it cannot be written)."""

    names: frozenset[str]
    numpy: str | None

    def reads(self, node: ast.AST) -> bool:
        """Whether ``node`` reads a name that holds an array."""
        return any(isinstance(n, ast.Name) and n.id in self.names for n in ast.walk(node))

    def call(self, function: str, args: list[ast.expr]) -> ast.Call | None:
        """``np.<function>(*args)``, or None without a numpy name."""
        if self.numpy is None:
            return None
        return ast.Call(ast.Attribute(ast.Name(self.numpy, ast.Load()), function, ast.Load()), args, [])


NO_ARRAYS = Arrays(frozenset(), None)


def numpy_name(tree: ast.Module) -> str | None:
    """The name a module binds numpy to (``import numpy as np``: ``np``), or None."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "numpy":
                    return alias.asname or "numpy"
    return None


def arrays_of(function: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module) -> Arrays:
    """The array names of ``function`` (see the module docstring); :data:`NO_ARRAYS` when it has no parameter
    annotated as an array, unless they are assumed to be arrays (:func:`arrays_assumed`)."""
    args = function.args
    parameters = [
        a for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.arg not in ("self", "cls")
    ]
    names = {
        a.arg
        for a in parameters
        if a.annotation is not None and ARRAY_ANNOTATION.search(ast.unparse(a.annotation))
    }
    numpy = numpy_name(tree)
    if not names and _ASSUMED.get() and numpy is not None:
        names = {a.arg for a in parameters if a.annotation is None}  # ``item: float`` says what it holds
    if not names:
        return NO_ARRAYS
    assigned = [n for n in ast.walk(function) if isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign)]
    grown = True
    while grown:  # a local assigned from an array holds one: ``gaps = bins - item``
        grown = False
        for node in assigned:
            if node.value is None or not any(
                isinstance(n, ast.Name) and n.id in names for n in ast.walk(node.value)
            ):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in _bound(target):
                    if name not in names:
                        names.add(name)
                        grown = True
    return Arrays(frozenset(names), numpy)


def _bound(target: ast.expr) -> list[str]:
    """The names an assignment to ``target`` binds: ``a`` and ``b`` in ``a, b = ...``; none in ``scores[i] = ...``
    (which puts a value in ``scores``, and only reads ``i``) or ``self.x = ...``."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    if isinstance(target, ast.Tuple | ast.List):
        return [name for element in target.elts for name in _bound(element)]
    return []


def arrays_at(tree: ast.Module, node: ast.expr | ast.stmt) -> Arrays:
    """The array names of the innermost function around ``node``'s line (:data:`NO_ARRAYS` outside any)."""
    around = [
        f
        for f in ast.walk(tree)
        if isinstance(f, FUNCTIONS) and f.lineno <= node.lineno <= (f.end_lineno or f.lineno)
    ]
    inner = max(around, key=lambda f: f.lineno, default=None)
    return NO_ARRAYS if inner is None else arrays_of(inner, tree)
