"""Crossover: one Python program given a statement of another's.

A population search (FunSearch's islands, OpenEvolve's niches) recombines what separate lineages found. Here the
two programs are evaluated structures of the same file: a statement of a function's body in the donor that the
recipient's same-named function lacks is put in the recipient, where it stands in the donor. It takes the place
of its counterpart when there is one (the final ``return``, an ``if`` with the same test but another body, an
assignment to the same names); otherwise it goes in after the nearest statement that precedes it in the donor and
that the recipient has too, or has a counterpart of (first, when there is none), and never after the recipient's
final ``return``.
"""

from __future__ import annotations

import ast
import copy
import random
import re

from assay.proposers.mutate.base import Mutation
from assay.proposers.mutate.pysource import FUNCTIONS, PyChange, Source, SourceEdit, apply_python
from assay.proposers.mutate.python_stmt_ops import first_line, is_pinned

NUMBER = re.compile(r"Constant\(value=[-+.\w]+\)")


def _functions(tree: ast.AST) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {node.name: node for node in ast.walk(tree) if isinstance(node, FUNCTIONS)}


def _counterpart(stmt: ast.stmt, body: list[ast.stmt]) -> int | None:
    """The index in ``body`` of the statement ``stmt`` would take the place of (None: it is inserted)."""
    if isinstance(stmt, ast.Return):
        last = len(body) - 1
        return last if isinstance(body[last], ast.Return) else None
    for i, other in enumerate(body):
        if _same_place(stmt, other):
            return i
    return None


def _same_place(stmt: ast.stmt, other: ast.stmt) -> bool:
    """An ``if`` with the same test up to its numbers, or an assignment to the same targets."""
    if isinstance(stmt, ast.If) and isinstance(other, ast.If):
        return NUMBER.sub("#", ast.dump(stmt.test)) == NUMBER.sub("#", ast.dump(other.test))
    if isinstance(stmt, ast.Assign) and isinstance(other, ast.Assign):
        return [ast.dump(t) for t in stmt.targets] == [ast.dump(t) for t in other.targets]
    return False


def _match(stmt: ast.stmt, body: list[ast.stmt]) -> int | None:
    """The index in ``body`` of ``stmt`` itself or of its counterpart (None: neither is there)."""
    same = ast.dump(stmt)
    found = next((i for i, other in enumerate(body) if ast.dump(other) == same), None)
    return found if found is not None else _counterpart(stmt, body)


def crossover(path: str, text: str, donor_text: str, rng: random.Random) -> Mutation | None:
    """``text`` (the recipient) with one statement of ``donor_text``'s functions that it lacks (see the module
    docstring), or None when the two share no function the donor has something new in."""
    try:
        donor_tree = ast.parse(donor_text)
    except (SyntaxError, ValueError):
        return None
    donor = Source(donor_text, donor_tree)
    donors = _functions(donor_tree)

    def graft(src: Source, rng: random.Random) -> PyChange | None:
        options = []
        for name, function in sorted(_functions(src.tree).items()):
            other = donors.get(name)
            if other is None or donor.indent(other.body[0]) is None:
                continue
            have = {ast.dump(stmt) for stmt in function.body}
            options += [
                (function, other, j)
                for j, stmt in enumerate(other.body)
                if ast.dump(stmt) not in have and not is_pinned(other.body, j)
            ]
        if not options:
            return None
        function, other, j = rng.choice(options)
        stmt, body = other.body[j], function.body
        indent = src.indent(body[-1])
        if indent is None:
            return None
        new_text = _reindent(donor.stmt_segment(stmt), donor.indent(stmt) or "", indent)
        description = f"grafted `{first_line(donor, stmt)}` {src.where(function.lineno)}"
        place = _counterpart(stmt, body)
        if place is not None:
            old = body[place]
            edit = SourceEdit(src.start(old), src.stmt_end(old), new_text)
            body[place] = copy.deepcopy(stmt)
            return PyChange(description, [[edit]])
        anchor = next((i for s in reversed(other.body[:j]) if (i := _match(s, body)) is not None), None)
        at = 0 if anchor is None else anchor + 1
        while at < len(body) and is_pinned(body, at):
            at += 1
        if at >= len(body) and isinstance(body[-1], ast.Return):
            at = len(body) - 1
        if at < len(body):
            edit = SourceEdit(src.start(body[at]), src.start(body[at]), f"{new_text}\n{indent}")
        else:
            end = src.stmt_end(body[-1])
            edit = SourceEdit(end, end, f"\n{indent}{new_text}")
        body.insert(at, copy.deepcopy(stmt))
        return PyChange(description, [[edit]])

    return apply_python("python.crossover", graft, path, text, rng)


def _reindent(text: str, old: str, new: str) -> str:
    """A statement's source (first line unindented, the others indented from ``old``) re-indented to ``new``."""
    lines = text.split("\n")
    return "\n".join(
        [lines[0], *((new + line[len(old) :]) if line.startswith(old) else line for line in lines[1:])]
    )
