"""Where each value of a JSON or YAML file stands in its text, so that an edit replaces that value's own bytes
and leaves every other byte of the file — comments, key order, quoting, anchors, indentation, blank lines — as
the user wrote it.

:func:`json_spans` scans JSON with the standard library's own string and number scanners; :func:`yaml_spans`
reads the marks PyYAML's composer puts on every node (a value reached through an alias or a merge key is the
node it names, and is found once, where the anchor stands). Both give a :class:`Spans`: the parsed document and,
per path (mapping keys and list indexes), the span of the value's text; for each list, its items' spans and
the separator to put between two items when there were none.

ruamel.yaml's round trip was tried first: it moved a comment that follows an anchor to a line of its own and
re-indented a block sequence, so a value edit changed lines it did not touch. Splicing the value's own span
changes nothing else.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from assay.safeload import load_json, load_yaml

Path = tuple[Any, ...]
_SCALAR = json.JSONDecoder()


@dataclass
class Spans:
    """A parsed document (``data``), its ``text``, and where each value stands in it: ``at[path]`` is the
    ``(start, end)`` of the value's text; ``items[path]`` the spans of a list's items, and ``gap[path]`` the
    separator written between two of its items when the list has only one."""

    kind: str
    text: str
    data: Any
    at: dict[Path, tuple[int, int]] = field(default_factory=dict)
    items: dict[Path, list[tuple[int, int]]] = field(default_factory=dict)
    gap: dict[Path, str] = field(default_factory=dict)


def _skip(text: str, i: int) -> int:
    """The index of the first character at or after ``i`` that is not JSON whitespace."""
    while i < len(text) and text[i] in " \t\n\r":
        i += 1
    return i


def json_spans(text: str) -> Spans:
    """The spans of a JSON document (raises ``ValueError`` when it does not parse)."""
    spans = Spans("json", text, load_json(text))

    def value(i: int, path: Path) -> int:
        start = i = _skip(text, i)
        if text.startswith("{", i):
            i = _skip(text, i + 1)
            while text[i] != "}":
                key, i = _SCALAR.raw_decode(text, i)
                i = _skip(text, _skip(text, i) + 1)  # past the colon
                i = _skip(text, value(i, (*path, key)))
                if text[i] == ",":
                    i = _skip(text, i + 1)
            i += 1
        elif text.startswith("[", i):
            items: list[tuple[int, int]] = []
            opening = text[i + 1 : _skip(text, i + 1)]
            i = _skip(text, i + 1)
            while text[i] != "]":
                i = _skip(text, value(i, (*path, len(items))))
                items.append(spans.at[(*path, len(items))])
                if text[i] == ",":
                    i = _skip(text, i + 1)
            spans.items[path] = items
            spans.gap[path] = "," + (opening if "\n" in opening else " ")
            i += 1
        else:
            i = _SCALAR.raw_decode(text, i)[1]
        spans.at[path] = (start, i)
        return i

    value(0, ())
    return spans


def yaml_spans(text: str) -> Spans:
    """The spans of a YAML document (raises ``ValueError`` or ``yaml.YAMLError`` when it does not parse)."""
    spans = Spans("yaml", text, load_yaml(text))
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    seen: set[int] = set()

    def visit(node: yaml.Node, path: Path) -> None:
        if id(node) in seen:
            return  # an alias: the node is edited where its anchor stands
        seen.add(id(node))
        start, end = node.start_mark.index, node.end_mark.index
        # A block collection's end mark is where the next token starts: its span ends at its own last byte.
        end = start + len(text[start:end].rstrip())
        spans.at[path] = (start, end)
        if isinstance(node, yaml.MappingNode):
            for key, child in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    visit(child, (*path, _key(key)))
        elif isinstance(node, yaml.SequenceNode):
            for index, child in enumerate(node.value):
                visit(child, (*path, index))
            spans.items[path] = [
                spans.at[(*path, i)] for i in range(len(node.value)) if (*path, i) in spans.at
            ]
            block = not text.startswith("[", start)
            spans.gap[path] = "\n" + " " * node.start_mark.column + "- " if block else ", "

    if root is not None:
        visit(root, ())
    return spans


def _key(node: yaml.ScalarNode) -> Any:
    """A scalar key as the safe loader constructs it (``1`` and ``true`` are not strings)."""
    if node.style is not None or node.tag == "tag:yaml.org,2002:merge":
        return node.value
    try:
        return yaml.safe_load(node.value)
    except yaml.YAMLError:
        return node.value


def same_except(old: str, new: str, path: Path, kind: str) -> bool:
    """Whether ``new`` parses to the structure of ``old`` with only the value at ``path`` changed (and
    whatever shows that value elsewhere: an alias, a merge key)."""
    try:
        if kind == "json":
            before, after = load_json(old), load_json(new)
        else:
            before, after = load_yaml(old), load_yaml(new)
    except (ValueError, yaml.YAMLError):
        return False
    return equal_but_at(before, after, path) or (kind == "yaml" and _nodes_equal(old, new, path))


def equal_but_at(before: Any, after: Any, path: Path) -> bool:
    """Whether two parsed documents are equal but for the value at ``path``."""
    return bool(_strip(before, path) == _strip(after, path))


def _strip(data: Any, path: Path) -> Any:
    """``data`` without the value at ``path`` (a marker in its place)."""
    if not path:
        return "\0"
    head, *rest = path
    if isinstance(data, dict) and head in data:
        return {k: (_strip(v, tuple(rest)) if k == head else v) for k, v in data.items()}
    if isinstance(data, list) and isinstance(head, int) and 0 <= head < len(data):
        return [(_strip(v, tuple(rest)) if i == head else v) for i, v in enumerate(data)]
    return data


def _nodes_equal(old: str, new: str, path: Path) -> bool:
    """The composed node trees of two YAML texts are equal but at ``path`` (anchors and aliases are the same
    nodes, so a value an alias shows changes with it and is compared once)."""
    try:
        a, b = yaml.compose(old, Loader=yaml.SafeLoader), yaml.compose(new, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError):
        return False
    seen: set[tuple[int, int]] = set()

    def equal(x: yaml.Node | None, y: yaml.Node | None, at: Path) -> bool:
        if at == path:
            return True
        if x is None or y is None or type(x) is not type(y) or x.tag != y.tag:
            return x is y
        if (id(x), id(y)) in seen:
            return True
        seen.add((id(x), id(y)))
        if isinstance(x, yaml.ScalarNode):
            return bool(x.value == y.value)
        if len(x.value) != len(y.value):
            return False
        if isinstance(x, yaml.SequenceNode):
            return all(equal(p, q, (*at, i)) for i, (p, q) in enumerate(zip(x.value, y.value, strict=True)))
        return all(
            equal(kx, ky, ()) and equal(vx, vy, (*at, _key(kx)) if isinstance(kx, yaml.ScalarNode) else at)
            for (kx, vx), (ky, vy) in zip(x.value, y.value, strict=True)
        )

    return equal(a, b, ())


def value_at(data: Any, path: Path) -> Any:
    """The value at ``path`` of a parsed document (KeyError/IndexError/TypeError when there is none)."""
    for part in path:
        data = data[part]
    return data


def scalar_token(kind: str, new: Any, old_token: str) -> str | None:
    """``new`` written as a scalar of ``kind``, in the style of the token it replaces (YAML: the same quotes,
    the same capitalisation of booleans); None when it cannot be written."""
    if kind == "json":
        try:
            return json.dumps(new, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return None
    if isinstance(new, bool):
        word = "true" if new else "false"
        return word.upper() if old_token.isupper() else word.title() if old_token.istitle() else word
    if isinstance(new, int | float) or new is None:
        return yaml.safe_dump(new, default_flow_style=True).removesuffix("\n...\n").strip()
    if not isinstance(new, str):
        return None
    if old_token.startswith("'") and "\n" not in new:
        return "'" + new.replace("'", "''") + "'"
    if not old_token.startswith(('"', "|", ">")) and _plain_ok(new):
        return new
    return json.dumps(new, ensure_ascii=False)


def _plain_ok(text: str) -> bool:
    """Whether ``text`` reads back as itself when written as a plain YAML scalar."""
    if not text or text != text.strip() or any(c in text for c in "\n#:{}[],&*!|>'\"%@`"):
        return False
    try:
        return bool(yaml.safe_load(text) == text)
    except yaml.YAMLError:
        return False
