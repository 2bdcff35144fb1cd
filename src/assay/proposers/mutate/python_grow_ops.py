"""Python operators that grow a program instead of only flipping it: add a term to a returned value, guard the
return with a branch (a threshold or a band of the function's own names, or of a computed part of the returned
value, returning that value scaled or shifted), wrap an expression in a nonlinearity.

The new pieces are built from what the function already has (its parameters and the local names assigned
before the edit) and new constants, which numeric tuning then tunes. The constants are floats in a function that
has a float literal; in one that has none, the program does not tell whether its values are counts or fractions,
so an edit draws ints three times in four and floats otherwise. An int is tuned over whole numbers on a linear
range, where a bound or a factor has few distinct places to sit; a float over decades on a log scale. Both palettes
fit numbers in the tens: where the dev cases carry numbers far from them (fractions, thousands), they move to that
scale, only floats among fractions (:mod:`~assay.proposers.mutate.scale`). On FunSearch's bin packing
(``benchmarks/growth_yield.py``, same edits) tuning turns 13% of int guards into a heuristic beating best fit by
a third, and 1.5% of float ones; an int constant next to a fraction is too coarse, which the floats' quarter
covers. A guard mostly bands a computed part of the returned value (``SUBJECT_SHARE``, ``SUBJECT_BAND``) and
half the time overrides the value in its band by a large shift (``OVERRIDE_SHARE``): on that benchmark (draws
1000-1199, 12 tuning trials each) 23 of 200 such guards become a hit, against 9 of 200 before. Every operator is
generic: it knows nothing of the task, only of Python functions. In a function over numpy arrays, a guard whose
test reads an array is a case of ``np.where`` and ``min``/``max`` are ``np.minimum``/``np.maximum``
(:mod:`~assay.proposers.mutate.python_arrays`). Layer 2 adds
terms and guarded branches, layer 3 wraps. :func:`turned_round` is no layer's: it turns the comparisons an
edit added the other way round, for an edit whose guard changed nothing measured; nor is :func:`flipped`, which
turns the shifts an edit added to a returned value the other way, for an edit that made things worse.
"""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass

from assay.proposers.mutate.base import Mutation, shorten
from assay.proposers.mutate.pysource import (
    FUNCTIONS,
    PyChange,
    Source,
    SourceEdit,
    apply_python,
    number_literal,
    replace_node,
)
from assay.proposers.mutate.python_arrays import NO_ARRAYS, Arrays, arrays_of
from assay.proposers.mutate.python_cases import (
    Comprehension,
    appends,
    case_parts,
    comprehension,
    comprehension_names,
    element,
    fill,
    filled,
    filled_list,
    own_nodes,
    put_element,
    scored,
    scored_values,
    under_cases,
)
from assay.proposers.mutate.scale import current_scale, scaled

OWN_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
NEW_CONSTANTS = (0.1, 0.5, 2.0, 5.0, 10.0, 20.0)
NEW_INTS = (2, 5, 10, 20, 50, 100)  # not 1: tuning leaves 0 and 1 alone (an offset, an index)
INT_ODDS = 0.75  # the share of int palettes in a function with no float literal (see the module docstring)
FLOAT_HOME = 10.0  # the typical number each palette fits: at another data scale it moves by the ratio
INT_HOME = 50.0
SUBJECT_SHARE = 0.8  # of guards on a returned value with a computed part: a test on that part ...
SUBJECT_BAND = 0.9  # ... mostly a band of it (see the module docstring)
OVERRIDE_SHARE = 0.5  # of guarded cases: the value overridden by a large shift, not scaled or nudged
# An override's first size, tuned on a log scale from a tenth to ten times it: so from 100, above the numbers the
# palettes fit, and it stays an override (100 itself spent half its trials, 10 to 100, among them, as a nudge).
OVERRIDE = 1000
Palette = tuple[int, ...] | tuple[float, ...]
TURNED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt,
    ast.Gt: ast.Lt,
    ast.LtE: ast.GtE,
    ast.GtE: ast.LtE,
}


@dataclass
class ReturnSite:
    """A ``return <value>`` of a function, and the names available there (parameters, earlier locals). Of a
    returned comprehension (``return [-(b - item) for b in bins]``: one score per element; also one a returned
    ``np.array(...)``, ``list(...)`` or ``tuple(...)`` is made of), the value edited is its ``element``
    expression, and the names include its loop variables: the list itself takes no term, band or scale
    (``[...] * 10`` repeats it; ``[...] - 100`` raises)."""

    function: ast.FunctionDef | ast.AsyncFunctionDef
    # the return, or of a list filled in a loop, the statement that appends to it or puts in it by index
    ret: ast.Return | ast.Expr | ast.Assign
    names: list[str]
    # its names that hold numpy arrays (:mod:`~assay.proposers.mutate.python_arrays`)
    arrays: Arrays = NO_ARRAYS
    # the comprehension whose element is the value, or the statement that fills a list with it (``ret``)
    element: Comprehension | ast.Expr | ast.Assign | None = None

    @property
    def value(self) -> ast.expr:
        """The value an edit changes: the returned value, the element of a returned comprehension, or what a
        loop puts in a returned list."""
        if isinstance(self.element, ast.Expr | ast.Assign):
            return filled(self.element)
        if self.element is not None:
            return element(self.element)
        assert self.ret.value is not None
        return self.ret.value

    def put(self, new: ast.expr) -> None:
        """Make ``new`` the value (:attr:`value`) in the tree."""
        if isinstance(self.element, ast.Expr | ast.Assign):
            fill(self.element, new)
        elif self.element is not None:
            put_element(self.element, new)
        else:
            self.ret.value = new


def return_sites(src: Source) -> list[ReturnSite]:
    """Each ``return <value>`` of a function with the names available there (parameters, earlier locals)."""
    found: list[ReturnSite] = []
    for function in ast.walk(src.tree):
        if not isinstance(function, FUNCTIONS):
            continue
        params = inputs(function)
        arrays = arrays_of(function, src.tree)
        for ret, _ in own_nodes(function):
            if not isinstance(ret, ast.Return) or ret.value is None:
                continue
            built = appends(function, ret)
            # a list filled in a loop: what each statement puts in it is a value, the list itself is none
            if built:
                sites = [_appended(function, stmt, params, arrays) for stmt in built]
                found += [a for a in sites if a.names and not any(f.ret is a.ret for f in found)]
                continue
            local = _stored_before(function, ret.lineno)
            comp = comprehension(ret.value)
            # what a comprehension iterates holds many values (``bins`` in ``for b in bins``): no scalar to edit
            loops, iterated = comprehension_names(ret.value)
            names = [n for n in dict.fromkeys([*params, *local, *loops]) if n in loops or n not in iterated]
            if arrays.names:  # an array the value only indexes has another shape: no term or test of its own
                direct = {n.id for n in reads_of(scored(ret.value), sorted(arrays.names))}
                names = [n for n in names if n not in arrays.names or n in direct]
            if names:
                found.append(ReturnSite(function, ret, names, arrays, comp))
    return found


def _stored_before(function: ast.AST, line: int) -> list[str]:
    """The names ``function`` assigns before ``line``."""
    return sorted(
        {
            n.id
            for n in ast.walk(function)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.lineno < line
        }
    )


def _appended(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    stmt: ast.Expr | ast.Assign,
    params: list[str],
    arrays: Arrays,
) -> ReturnSite:
    """The site of what ``stmt`` (``acc.append(X)`` or ``acc[i] = X``, in a loop) puts in a returned list: its
    names are those assigned before it, the loops' variables among them, but not the list nor a collection: what a
    loop iterates (``bins`` in ``for b in bins``) or what the function looks up in (``bins`` in ``bins[i]``) holds
    many values."""
    loops = [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.For | ast.AsyncFor) and any(n is stmt for n in ast.walk(node))
    ]
    targets = [n.id for loop in loops for n in ast.walk(loop.target) if isinstance(n, ast.Name)]
    many = {n.id for loop in loops for n in ast.walk(loop.iter) if isinstance(n, ast.Name)}
    many |= {
        n.value.id
        for n in ast.walk(function)
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
    }
    candidates = dict.fromkeys([*params, *_stored_before(function, stmt.lineno), *targets])
    names = [n for n in candidates if n not in many and n != filled_list(stmt)]
    return ReturnSite(function, stmt, names, arrays, stmt)


def reads_of(value: ast.expr, names: list[str]) -> list[ast.Name]:
    """The reads of ``names`` in ``value``, outside a lambda's or a comprehension's own scope and outside a
    lookup (``table`` and ``key`` in ``table[key]``: a combination there looks up something else, or in
    something that is not a table)."""
    found: list[ast.Name] = []
    pending: list[ast.AST] = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, OWN_SCOPES):
            continue  # a name bound inside (a loop variable, a parameter) is not the function's
        if isinstance(node, ast.Name) and node.id in names:
            found.append(node)
        if not isinstance(node, ast.Subscript):
            pending.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _indexes(function: ast.AST) -> set[int]:
    """The ids of the nodes inside an index of ``function`` (``key`` in ``table[key]``, or in a dict
    comprehension's ``{key: value for ...}``: which element a value is)."""
    keys = [n.slice if isinstance(n, ast.Subscript) else n.key for n in ast.walk(function)
            if isinstance(n, ast.Subscript | ast.DictComp)]  # fmt: skip
    return {id(n) for key in keys for n in ast.walk(key)}


def inputs(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The function's named parameters but ``self`` and ``cls``: what a caller passes it."""
    args = function.args
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.arg not in ("self", "cls")]


def _palette(function: ast.AST, rng: random.Random) -> Palette:
    """The new constants of an edit in ``function`` (see the module docstring), at the dev cases' scale when
    they carry numbers far from the palettes' own (:mod:`~assay.proposers.mutate.scale`)."""
    scale = current_scale()
    floats = NEW_CONSTANTS if scale is None else scaled(NEW_CONSTANTS, scale / FLOAT_HOME, whole=False)
    if any(isinstance(n, ast.Constant) and type(n.value) is float for n in ast.walk(function)):
        return floats
    if scale is not None and scale < 1:
        return floats  # fractions: a whole number is no place to put a bound
    ints = NEW_INTS if scale is None else scaled(NEW_INTS, scale / INT_HOME, whole=True)
    return ints if rng.random() < INT_ODDS else floats


def _override(palette: Palette) -> ast.Constant:
    """An override's first size, of the palette's kind: ``OVERRIDE``, or as much larger as the data's numbers are
    (a shift of 1000 decides little among values in the tens of thousands; among fractions it is large already)."""
    scale = current_scale()
    whole = isinstance(palette[0], int)
    if scale is None or scale < 1:
        return ast.Constant(OVERRIDE if whole else float(OVERRIDE))
    return ast.Constant(scaled((OVERRIDE,), scale / INT_HOME, whole=whole)[0])


def _constant(rng: random.Random, palette: Palette) -> ast.Constant:
    return ast.Constant(rng.choice(palette))


def _term(names: list[str], rng: random.Random, palette: Palette) -> ast.expr:
    """``c * a``, ``c * a * a`` or ``c * a * b`` from the available names."""
    a = ast.Name(rng.choice(names), ast.Load())
    shape = rng.choice(("linear", "square", "product") if len(names) > 1 else ("linear", "square"))
    if shape == "linear":
        factor: ast.expr = a
    elif shape == "square":
        factor = ast.BinOp(a, ast.Mult(), ast.Name(a.id, ast.Load()))
    else:
        b = rng.choice([n for n in names if n != a.id])
        factor = ast.BinOp(a, ast.Mult(), ast.Name(b, ast.Load()))
    return ast.BinOp(_constant(rng, palette), ast.Mult(), factor)


def add_term(src: Source, rng: random.Random) -> PyChange | None:
    """``return E`` becomes ``return E + c * x`` (or ``- c * x``, ``c * x * x``, ``c * x * y``)."""
    sites = return_sites(src)
    if not sites:
        return None
    site = rng.choice(sites)
    old = site.value
    term = _term(site.names, rng, _palette(site.function, rng))
    new = ast.BinOp(old, rng.choice((ast.Add(), ast.Sub())), term)
    plans = replace_node(src, old, new)
    site.put(new)
    return PyChange(
        f"added the term `{shorten(ast.unparse(term))}` to a return {src.where(site.ret.lineno)}", plans
    )


def _subjects(value: ast.expr, subscripts: bool = False) -> list[ast.expr]:
    """The computed parts of a returned value (an operation on at least one name; a negation's operand in place
    of the negation): what a case split of the value can test, such as ``b - a`` in ``return -(b - a)``; with
    ``subscripts``, an element looked up by name too (``d[i, js]`` in ``return -d[i, js]``: on arrays, the one
    part that has the value's shape)."""
    found: dict[str, ast.expr] = {}
    pending: list[ast.AST] = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, OWN_SCOPES):
            continue  # names bound inside (a lambda's parameters, a loop variable) mean nothing outside it
        pending.extend(reversed(list(ast.iter_child_nodes(node))))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            node = node.operand
        if isinstance(node, ast.BinOp | ast.Call) or (subscripts and isinstance(node, ast.Subscript)):
            inside = {type(n) for n in ast.walk(node)}
            if ast.Name in inside and not inside & {ast.NamedExpr, ast.Await}:
                found.setdefault(ast.unparse(node), node)
    return list(found.values())


def _range(subject: ast.expr, rng: random.Random, palette: Palette) -> ast.expr:
    """``0 < subject - low < width``: the band from ``low`` to ``low + width``, ``low`` from the smaller half of
    the palette and ``low + width`` from the larger but its largest, a wide band which tuning narrows. A band up to
    the largest (100 among numbers in the tens) spans nearly every value the subject takes, a threshold in all but
    name; where such a band helps a little, a run keeps it and stays: narrowed halfway it does worse, so tuning
    does not leave it. Written by its start and
    width, not by two bounds, so that tuning its two numbers apart can never cross them (``54 <= s < 27`` fires
    for nothing); a width tuned to 0 leaves an empty band, which the inert rules then treat as such."""
    half = len(palette) // 2
    low, high = rng.choice(palette[:half]), rng.choice(palette[half:-1] or palette[half:])
    offset = ast.BinOp(subject, ast.Sub(), ast.Constant(low))
    return ast.Compare(ast.Constant(type(low)(0)), [ast.Lt(), ast.Lt()], [offset, ast.Constant(high - low)])


def _condition(
    names: list[str], value: ast.expr, rng: random.Random, palette: Palette, subscripts: bool = False
) -> ast.expr:
    """A test on a computed part of the returned ``value`` (``SUBJECT_SHARE`` of the time, when it has one):
    mostly a range of it split out as ``0 < s - c1 < w``, else ``s < c`` (or ``>``). Otherwise one built from the
    available names: ``a < c``, ``a - b < c`` or ``a < c * b`` (or ``>``), or a range of ``a`` or ``a - b``."""
    subjects = _subjects(value, subscripts)
    if subjects and rng.random() < SUBJECT_SHARE:
        part = copy.deepcopy(rng.choice(subjects))
        if rng.random() < SUBJECT_BAND:
            return _range(part, rng, palette)
        return ast.Compare(part, [rng.choice((ast.Lt(), ast.Gt()))], [_constant(rng, palette)])
    a = ast.Name(rng.choice(names), ast.Load())
    others = [n for n in names if n != a.id]
    shape = rng.choice(("single", "difference", "ratio", "range") if others else ("single", "range"))
    if shape == "range":
        subject: ast.expr = a
        if others and rng.random() < 0.5:
            subject = ast.BinOp(a, ast.Sub(), ast.Name(rng.choice(others), ast.Load()))
        return _range(subject, rng, palette)
    compare: ast.cmpop = rng.choice((ast.Lt(), ast.Gt()))
    if shape == "single":
        return ast.Compare(a, [compare], [_constant(rng, palette)])
    b = ast.Name(rng.choice(others), ast.Load())
    if shape == "difference":
        return ast.Compare(ast.BinOp(a, ast.Sub(), b), [compare], [_constant(rng, palette)])
    return ast.Compare(a, [compare], [ast.BinOp(_constant(rng, palette), ast.Mult(), b)])


def _case_value(value: ast.expr, names: list[str], rng: random.Random, palette: Palette) -> ast.expr:
    """The value a guarded case returns: half the time ``E`` overridden (``E - 1000`` or ``E + 1000``: the case
    loses, or wins, against the cases outside it; tuning sets how strongly, on a log scale), else ``E`` scaled
    (``E * c``: one constant whose tuning can weaken or strengthen it, whatever its sign), or shifted by a
    constant or a new term (``E - c``, ``E + c * x``)."""
    if rng.random() < OVERRIDE_SHARE:
        return ast.BinOp(copy.deepcopy(value), rng.choice((ast.Add(), ast.Sub())), _override(palette))
    kind = rng.choice(("scale", "constant", "term"))
    if kind == "scale":  # neither palette holds 1, so a scale always changes the value
        return ast.BinOp(copy.deepcopy(value), ast.Mult(), _constant(rng, palette))
    shift = _constant(rng, palette) if kind == "constant" else _term(names, rng, palette)
    return ast.BinOp(copy.deepcopy(value), rng.choice((ast.Add(), ast.Sub())), shift)


# How a guard's description starts: the offline proposer counts guards by it.
GUARD_HEAD = "added a guarded return"


def guard(src: Source, rng: random.Random) -> PyChange | None:
    """Before a ``return E`` that is a statement of its own line, add ``if <condition>: return E * c`` (or
    ``E - c``, or ``E`` with a new term): a case split of the inputs or of a part of ``E``, built from the
    function's own names."""
    sites = [s for s in return_sites(src) if src.indent(s.ret) is not None]
    if not sites:
        return None
    site = rng.choice(sites)
    # of a value with guarded cases already, a new case is built from the value under them
    value = under_cases(site.value)
    palette = _palette(site.function, rng)
    branch_value = _case_value(value, site.names, rng, palette)
    test = _condition(site.names, value, rng, palette, subscripts=bool(site.arrays.names))
    branch = ast.If(test, [ast.Return(branch_value)], [])
    if site.element is not None or site.arrays.reads(branch.test):
        return _case(src, site, branch)
    block = _block_of(site.function, site.ret)
    if block is None:
        return None
    indent = src.indent(site.ret) or ""
    text = f"if {ast.unparse(branch.test)}:\n{indent}    return {ast.unparse(branch_value)}\n{indent}"
    start = src.start(site.ret)
    block.insert(next(i for i, s in enumerate(block) if s is site.ret), branch)
    description = f"{GUARD_HEAD} `if {shorten(ast.unparse(branch.test))}` {src.where(site.ret.lineno)}"
    return PyChange(description, [[SourceEdit(start, start, text)]])


def _case(src: Source, site: ReturnSite, branch: ast.If) -> PyChange | None:
    """The guarded case of ``branch`` as an expression (:mod:`~assay.proposers.mutate.python_cases`): in a
    comprehension's element ``E``, ``case if test else E``; on arrays ``np.where(test, case, E)``, the test
    elementwise (None when the module has no name for numpy)."""
    value = site.value  # the whole value: a new case goes over the cases it has
    assert isinstance(branch.body[0], ast.Return) and branch.body[0].value is not None
    case = branch.body[0].value
    new: ast.expr | None
    if site.element is not None:
        new = ast.IfExp(branch.test, case, value)
    else:
        new = site.arrays.call("where", [elementwise_test(branch.test), case, value])
    if new is None:
        return None
    plans = replace_node(src, value, new)
    site.put(new)
    description = f"{GUARD_HEAD} `{shorten(ast.unparse(new))}` {src.where(site.ret.lineno)}"
    return PyChange(description, plans)


def elementwise_test(test: ast.expr) -> ast.expr:
    """A test that an array can answer elementwise: a band ``0 < s - low < width`` (:func:`band_offset`)
    becomes ``abs(s - centre) < half`` (the same range, whole numbers rounded down for ints); any other test as it
    is."""
    offset = band_offset(test) if isinstance(test, ast.Compare) else None
    low = number_literal(offset.right) if offset is not None else None
    width = number_literal(test.comparators[1]) if isinstance(test, ast.Compare) and low is not None else None
    if offset is None or low is None or width is None:
        return test
    whole = isinstance(low, int) and isinstance(width, int)
    half = width // 2 if whole else width / 2
    centre = low + half if whole else float(f"{low + half:.4g}")  # 10.05, not 10.049999999999999
    moved = ast.BinOp(offset.left, ast.Sub(), ast.Constant(centre))
    return ast.Compare(ast.Call(ast.Name("abs", ast.Load()), [moved], []), [ast.Lt()], [ast.Constant(half)])


def _block_of(function: ast.AST, stmt: ast.stmt) -> list[ast.stmt] | None:
    for node in ast.walk(function):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                return block
    return None


def _wrapped(
    expr: ast.expr, rng: random.Random, palette: Palette, arrays: Arrays = NO_ARRAYS
) -> ast.expr | None:
    kind = rng.choice(("square", "abs", "sqrt", "min", "max", "reciprocal"))
    if kind in ("min", "max") and arrays.reads(expr):
        return arrays.call(f"{kind}imum", [expr, _constant(rng, palette)])
    if kind == "square":
        return ast.BinOp(expr, ast.Pow(), ast.Constant(2))
    if kind == "abs":
        return ast.Call(ast.Name("abs", ast.Load()), [expr], [])
    if kind == "sqrt":
        return ast.BinOp(ast.Call(ast.Name("abs", ast.Load()), [expr], []), ast.Pow(), ast.Constant(0.5))
    if kind in ("min", "max"):
        return ast.Call(ast.Name(kind, ast.Load()), [expr, _constant(rng, palette)], [])
    return ast.BinOp(
        ast.Constant(1.0),
        ast.Div(),
        ast.BinOp(ast.Constant(1.0), ast.Add(), ast.Call(ast.Name("abs", ast.Load()), [expr], [])),
    )


def wrap(src: Source, rng: random.Random) -> PyChange | None:
    """Wrap a returned value, or a parameter or local where it is read, in a nonlinearity: ``x ** 2``,
    ``abs(x)``, ``abs(x) ** 0.5``, ``min(x, c)``, ``max(x, c)`` or ``1 / (1 + abs(x))``."""
    sites = return_sites(src)
    if not sites:
        return None
    site = rng.choice(sites)
    palette = _palette(site.function, rng)
    value = site.value
    indexes = _indexes(
        site.function
    )  # ``table[abs(key)]`` looks up something else, ``abs(table)[key]`` fails
    reads = [
        (parent, field, child)
        for parent in ast.walk(site.function)
        for field, child in ast.iter_fields(parent)
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and child.id in site.names
        and not isinstance(parent, ast.Call | ast.Attribute | ast.Subscript) and id(child) not in indexes
    ]  # fmt: skip
    old: ast.expr
    if reads and rng.random() < 0.5:
        parent, field, old = rng.choice(reads)
        new = _wrapped(old, rng, palette, site.arrays)
        if new is None:
            return None
        plans = replace_node(src, old, new)
        setattr(parent, field, new)
    else:
        old, wrapped = value, _wrapped(value, rng, palette, site.arrays)
        if wrapped is None:
            return None
        new = wrapped
        plans = replace_node(src, old, new)
        site.put(new)
    return PyChange(
        f"wrapped `{shorten(ast.unparse(old))}` as `{shorten(ast.unparse(new))}` {src.where(old.lineno)}",
        plans,
    )


def _rewritten(src: Source, nodes: Sequence[ast.expr]) -> list[list[SourceEdit]]:
    """Two plans that write ``nodes`` (changed in place) over their own text: bare, then each parenthesised."""
    bare: list[SourceEdit] = []
    parenthesised: list[SourceEdit] = []
    for node in nodes:
        plain, wrapped = replace_node(src, node, node)
        bare += plain
        parenthesised += wrapped
    return [bare, parenthesised]


def turned_round(parent: str, path: str, edited: str) -> Mutation | None:
    """``edited`` (an edit of ``parent``, the text of ``path``) with each single comparison it added turned the
    other way round: ``s > c`` becomes ``s < c``. A guard whose edit changed nothing measured either never
    fires or, where it fires, keeps the order of what it returns; on the other side of its threshold it may do
    neither (``if b - a > c: return (b - a) * k`` keeps the order of a ranking by ``b - a``; ``< c`` does not).
    A band it added (``0 < s - c < w``, whose start and width tuning keeps at or above 0) is mirrored to the
    other side of 0 instead, its subject negated (``0 < a - b - c < w``): a difference written the other way
    round (``a - b`` where ``b - a`` is what is positive) never reaches the band's range.
    None when the edit added no such comparison (changing one the parent had is not adding one), or a file does
    not parse."""
    try:
        known = [ast.dump(n) for n in ast.walk(ast.parse(parent)) if isinstance(n, ast.Compare)]
    except (SyntaxError, ValueError):
        return None

    def turn(src: Source, rng: random.Random) -> PyChange | None:
        compares = [n for n in ast.walk(src.tree) if isinstance(n, ast.Compare)]
        added = [n for n in compares if _turnable(n) and ast.dump(n) not in known]
        if not added or len(compares) <= len(known):
            return None  # the edit changed a comparison the parent had (< to <=), it added none
        added.sort(key=lambda n: (n.lineno, n.col_offset))
        was = ast.unparse(added[0])
        for node in added:
            offset = band_offset(node)
            if offset is not None:
                offset.left = _negated(offset.left)
            else:
                node.ops = [TURNED[type(node.ops[0])]()]
        more = f" (and {len(added) - 1} more)" if len(added) > 1 else ""
        return PyChange(
            f"turned `{shorten(was)}` round to `{shorten(ast.unparse(added[0]))}`{more} "
            f"{src.where(added[0].lineno)}",
            _rewritten(src, added),
        )

    return apply_python("python.turn", turn, path, edited, random.Random(0))


def _turnable(node: ast.Compare) -> bool:
    """Whether :func:`turned_round` can turn ``node``: a band, or a single comparison it knows the opposite of."""
    return band_offset(node) is not None or (len(node.ops) == 1 and type(node.ops[0]) in TURNED)


def band_offset(node: ast.Compare) -> ast.BinOp | None:
    """The ``s - c`` of a band ``0 < s - c < w`` (as :func:`_range` writes one); None for any other comparison."""
    if (
        isinstance(node.left, ast.Constant)
        and node.left.value == 0
        and [type(op) for op in node.ops] == [ast.Lt, ast.Lt]
        and isinstance(offset := node.comparators[0], ast.BinOp)
        and isinstance(offset.op, ast.Sub)
        and isinstance(offset.right, ast.Constant)
    ):
        return offset
    return None


def band_place(node: ast.Compare) -> tuple[ast.expr, ast.expr] | None:
    """The two parts that place a band: the start and the width of ``0 < s - c < w`` (:func:`band_offset`), or the
    centre and the half-width of its elementwise form ``abs(s - c) < h`` (:func:`elementwise_test`); None for any
    other comparison."""
    if (offset := band_offset(node)) is not None:
        return offset.right, node.comparators[1]
    if (
        [type(op) for op in node.ops] == [ast.Lt]
        and isinstance(node.left, ast.Call)
        and isinstance(node.left.func, ast.Name)
        and node.left.func.id == "abs"
        and len(node.left.args) == 1
        and isinstance(moved := node.left.args[0], ast.BinOp)
        and isinstance(moved.op, ast.Sub)
    ):
        return moved.right, node.comparators[0]
    return None


def _negated(subject: ast.expr) -> ast.expr:
    """``b - a`` for ``a - b``, ``a`` for ``-a``, else ``-(subject)``."""
    if isinstance(subject, ast.BinOp) and isinstance(subject.op, ast.Sub):
        return ast.BinOp(subject.right, ast.Sub(), subject.left)
    if isinstance(subject, ast.UnaryOp) and isinstance(subject.op, ast.USub):
        return subject.operand
    return ast.UnaryOp(ast.USub(), subject)


def _returned(tree: ast.AST) -> list[ast.expr]:
    """The values ``tree``'s functions return, and where one scores by something else, that too (one value per
    element: a returned comprehension's element, what a loop appends to a returned list; :func:`scored_values`)."""
    values: list[ast.expr] = []
    for stmt, value in scored_values(tree):
        if isinstance(stmt, ast.Return) and stmt.value is not None and stmt.value is not value:
            values.append(stmt.value)
        values.append(value)
    return values


def flipped(parent: str, path: str, edited: str) -> Mutation | None:
    """``edited`` with each shift it added to a returned value turned the other way: ``return E + t`` (``E`` a
    value ``parent`` returns; on arrays, the case ``np.where(test, E + t, E)``) becomes ``return E - t`` and the
    reverse. An edit that made things worse moved a
    ranking one way; the other way may help. None when the edit added no such shift, or a file does not parse."""
    try:
        values = _returned(ast.parse(parent))
    except (SyntaxError, ValueError):
        return None
    # the value under guarded cases is a returned value too
    known = [ast.dump(v) for v in values] + [ast.dump(under_cases(v)) for v in values]

    def flip(src: Source, rng: random.Random) -> PyChange | None:
        returned = _returned(src.tree)
        shifts = [
            v for v in returned
            if isinstance(v, ast.BinOp) and isinstance(v.op, (ast.Add, ast.Sub)) and ast.dump(v) not in known
            and ast.dump(v.left) in known
        ]  # fmt: skip
        # and a guarded case written as an expression: ``np.where(test, E + t, E)``, ``E + t if test else E``
        shifts += [
            case
            for n in ast.walk(src.tree)
            if (parts := case_parts(n)) is not None
            and ast.dump(n) not in known
            and isinstance(case := parts[1], ast.BinOp)
            and isinstance(case.op, (ast.Add, ast.Sub))
            and ast.dump(case.left) in known
        ]
        if not shifts:
            return None
        shifts.sort(key=lambda n: (n.lineno, n.col_offset))
        was = ast.unparse(shifts[0])
        for node in shifts:
            node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
        return PyChange(
            f"flipped `{shorten(was)}` to `{shorten(ast.unparse(shifts[0]))}` {src.where(shifts[0].lineno)}",
            _rewritten(src, shifts),
        )

    return apply_python("python.flip", flip, path, edited, random.Random(0))
