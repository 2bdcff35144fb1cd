"""Pruning: propose the best program without a branch it added over the baseline.

A guarded return that tuning left where no dev instance reaches it, or whose cases return what the code after
it would, is dead weight in the program a user adopts (``if 54 <= remaining - item < 27:`` never fires). The
offline default proposes, right after a keep, the kept program without each ``if`` statement (no ``else``, not
the last statement of its block) whose first line the best's diff against the baseline adds, one per
generation; a branch of the baseline's own whose numbers tuning changed is never offered. A guarded case on
numpy arrays that the diff adds (``return np.where(test, case, E)``) is offered as ``return E``, and one in a
returned comprehension's element (``[case if test else E for ...]``) as ``E``. The gate keeps
such a removal only as a tie with a smaller artifact: when nothing measured changed.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Iterator

from assay.proposers.mutate.base import Mutation, shorten
from assay.proposers.mutate.pysource import PyChange, Source, SourceEdit, apply_python, replace_node
from assay.proposers.mutate.python_cases import case_parts, scored_values
from assay.proposers.mutate.python_ops import substitute

PRUNE_NOTE = " (pruning: the best added it over the baseline)"
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")


def _removable(tree: ast.AST) -> Iterator[tuple[list[ast.stmt], int]]:
    """Each ``if`` without ``else`` that is not the last statement of its block: (block, index)."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for index, stmt in enumerate(block[:-1]):
                if isinstance(stmt, ast.If) and not stmt.orelse:
                    yield block, index


def _shape(line: str) -> str:
    """A diff line's code with its numbers blanked: a test whose constants were tuned keeps its shape."""
    return NUMBER.sub("#", line[1:].strip())


def added_branches(text: str, diff: str) -> list[int]:
    """The lines of the removable ``if`` statements of ``text`` whose first line ``diff`` adds (sorted); a line
    the diff only changed the numbers of is the baseline's own branch, tuned, and not offered."""
    lines_of = diff.splitlines()
    removed = {_shape(line) for line in lines_of if line.startswith("-") and not line.startswith("---")}
    added = {
        line[1:].strip()
        for line in lines_of
        if line.startswith("+") and not line.startswith("+++") and _shape(line) not in removed
    }
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    lines = text.splitlines()
    starts = [block[i].lineno for block, i in _removable(tree)] + [r.lineno for r, _ in _cases(tree)]
    return sorted(line for line in starts if lines[line - 1].strip() in added)


def _cases(tree: ast.AST) -> Iterator[tuple[ast.Return | ast.Expr | ast.Assign, ast.expr]]:
    """Each statement that gives a score (:func:`~assay.proposers.mutate.python_cases.scored_values`: a return,
    or a statement that fills a returned list) whose value is a guarded case written as an expression: (the
    statement, the case)."""
    for stmt, value in scored_values(tree):
        if case_parts(value) is not None:
            yield stmt, value


def without_branch(path: str, text: str, line: int) -> Mutation | None:
    """``text`` without the removable ``if`` statement that starts on ``line``, or without the guarded case
    written as an expression on that line (None when there is neither)."""

    def remove(src: Source, rng: random.Random) -> PyChange | None:
        for block, index in _removable(src.tree):
            stmt = block[index]
            if isinstance(stmt, ast.If) and stmt.lineno == line:
                start, end = src.start(stmt), src.start(block[index + 1])
                del block[index]
                test = shorten(ast.unparse(stmt.test))
                return PyChange(
                    f"removed the branch `if {test}` {src.where(line)}", [[SourceEdit(start, end, "")]]
                )
        for ret, case in _cases(src.tree):
            parts = case_parts(case)
            if ret.lineno == line and parts is not None:
                plans = replace_node(src, case, parts[2])
                parent = next(p for p in ast.walk(ret) if any(c is case for c in ast.iter_child_nodes(p)))
                substitute(parent, case, parts[2])
                return PyChange(
                    f"removed the case `{shorten(ast.unparse(parts[0]))}` {src.where(line)}", plans
                )
        return None

    mutation = apply_python("python.prune", remove, path, text, random.Random(0))
    if mutation is None:
        return None
    return Mutation(mutation.path, mutation.new_text, mutation.description + PRUNE_NOTE, mutation.operator)
