"""The numbers a family declares for a bare optimizer (``PARAMETERS`` in its ``task.py``), read from an artifact's
text and written into it by name, as a user's own Optuna script would set them.

``PARAMETERS`` maps a name to its range, written as one writes ``trial.suggest_*``: ``(low, high)`` (two ints: an
int; else a float), ``(low, high, "log")`` (a float on a log scale), or a list of choices. A name says where the
number is:

- in a Python file: ``LIMIT`` (a module constant), ``WEIGHTS['refund']`` (an entry of a module constant's dict or
  list), ``Cache.DECAY`` (a class attribute), ``place(pull)`` or ``Cache.__init__(decay)`` (a parameter's default);
- in a JSON or TOML file: the dotted path of its key (``scale_up.step``).

Standard library only. Writing changes only the bytes of the numbers written in a Python or TOML file (a JSON file
is dumped again, two spaces a level).
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from collections.abc import Iterator, Mapping
from typing import Any

Value = int | float | str
Spec = tuple[Any, ...] | list[Any]

_PYTHON_NAME = re.compile(
    r"(?P<owner>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)"
    r"(?:\[(?P<key>[^\]]+)\]|\((?P<arg>[A-Za-z_]\w*)\))?"
)


def suffix(file: str) -> str:
    return file.rsplit(".", 1)[-1].lower()


def read(file: str, text: str, name: str) -> Value:
    """The value of ``name`` in the artifact ``file`` whose text is ``text`` (KeyError if it is not there)."""
    if suffix(file) == "py":
        return ast.literal_eval(_python_node(text, name))
    node: Any = json.loads(text) if suffix(file) == "json" else tomllib.loads(text)
    for key in name.split("."):
        node = node[key]
    return node


def write(file: str, text: str, values: Mapping[str, Value]) -> str:
    """``text`` with each named number set to its value."""
    kind = suffix(file)
    if kind == "py":
        return _write_python(text, values)
    if kind == "json":
        data = json.loads(text)
        for name, value in values.items():
            *path, last = name.split(".")
            node = data
            for key in path:
                node = node[key]
            if last not in node:
                raise KeyError(name)
            node[last] = value
        return json.dumps(data, indent=2) + "\n"
    if kind == "toml":
        for name, value in values.items():
            text = _write_toml(text, name, value)
        return text
    raise ValueError(f"{file}: no way to write numbers into a .{kind} file")


def literal(value: Value) -> str:
    """A value as Python, JSON and TOML all spell it (a string quoted)."""
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _python_node(text: str, name: str) -> ast.expr:
    try:
        return _find(text, name)
    except (StopIteration, IndexError):
        raise KeyError(name) from None


def _find(text: str, name: str) -> ast.expr:
    found = _PYTHON_NAME.fullmatch(name)
    if found is None:
        raise KeyError(name)
    owner, key, arg = found.group("owner"), found.group("key"), found.group("arg")
    scope: list[ast.stmt] = ast.parse(text).body
    *outer, last = owner.split(".")
    for part in outer:
        scope = next(n.body for n in scope if isinstance(n, ast.ClassDef) and n.name == part)
    if arg is not None:
        function = next(
            n for n in scope if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == last
        )
        args = function.args
        positional = [*args.posonlyargs, *args.args]
        pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
        return next(default for a, default in pairs if a.arg == arg)
    value = next(_assigned(scope, last))
    if key is None:
        return value
    wanted = ast.literal_eval(key)
    if isinstance(value, ast.Dict):
        return next(v for k, v in zip(value.keys, value.values, strict=True) if k and _is(k, wanted))
    if isinstance(value, ast.List | ast.Tuple):
        return value.elts[wanted]
    raise KeyError(name)


def _is(node: ast.expr, wanted: object) -> bool:
    return isinstance(node, ast.Constant) and node.value == wanted


def _assigned(scope: list[ast.stmt], name: str) -> Iterator[ast.expr]:
    for node in scope:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            yield value


def _write_python(text: str, values: Mapping[str, Value]) -> str:
    data = text.encode("utf-8")
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans = []
    for name, value in values.items():
        node = _python_node(text, name)
        assert node.end_lineno is not None and node.end_col_offset is not None
        begin = starts[node.lineno - 1] + node.col_offset
        end = starts[node.end_lineno - 1] + node.end_col_offset
        spans.append((begin, end, literal(value).encode("utf-8")))
    for begin, end, new in sorted(spans, reverse=True):
        data = data[:begin] + new + data[end:]
    return data.decode("utf-8")


_TABLE = re.compile(r"\s*\[([^\[\]]+)\]\s*(?:#.*)?$")
_KEY = re.compile(r"(?P<head>\s*(?P<key>[A-Za-z0-9_-]+)\s*=\s*)(?P<value>[^#\s]+)(?P<tail>.*)$")


def _write_toml(text: str, name: str, value: Value) -> str:
    *table, key = name.split(".")
    lines = text.splitlines(keepends=True)
    current: list[str] = []
    for index, line in enumerate(lines):
        header = _TABLE.match(line)
        if header:
            current = [part.strip() for part in header.group(1).split(".")]
            continue
        found = _KEY.match(line)
        if found and current == table and found.group("key") == key:
            lines[index] = found.group("head") + literal(value) + found.group("tail")
            if line.endswith("\n") and not lines[index].endswith("\n"):
                lines[index] += "\n"
            return "".join(lines)
    raise KeyError(name)
