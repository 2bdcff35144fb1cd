"""Parse YAML and JSON written by users or candidates: libyaml's speed, and limits instead of crashes.

:func:`load_yaml` composes nodes in Python from libyaml's events (PyYAML's own parser when libyaml is
missing) so that it can refuse, with the line, column and field path:

- nesting deeper than ``MAX_DEPTH`` collections, aliases included (libyaml's recursive composer crashes
  the process near 50,000 levels, and Python code that walks the data fails far earlier);
- aliases expanding to more than ``MAX_ALIAS_NODES`` nodes (a "billion laughs" document is ten lines)
  and an alias inside the node it names (recursive data);
- a key repeated in one mapping (YAML forbids it; PyYAML keeps the last value silently);
- scalars that do not convert (``2001-13-01``, an integer of 5,000 digits).

:func:`load_json` bounds nesting the same way. Both raise ``ValueError`` subclasses or ``yaml.YAMLError``,
never ``RecursionError``.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.error import Mark, MarkedYAMLError
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from assay.errors import field_path

MAX_DEPTH = 100
MAX_ALIAS_NODES = 1_000_000
LIMIT_NOTE = "assay's limit"

_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"\s*:?|[\[\]{},]')
_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_INT_TAG = "tag:yaml.org,2002:int"
_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Digests of the last texts that parsed under these limits: a file read both as cases and as an artifact
# (a promptfoo config) is parsed once; the L1 syntax check only needs to know that it parses.
_PARSED: OrderedDict[bytes, None] = OrderedDict()
_PARSED_MAX = 32
_parsed_lock = threading.Lock()


class YAMLInputError(MarkedYAMLError):
    """A document that parses but is refused (too deep, repeated key, ...); ``field`` is where, if known."""

    def __init__(self, problem: str, mark: Mark | None, field: str | None = None) -> None:
        super().__init__(problem=problem, problem_mark=mark)
        self.field = field


class NestingError(ValueError):
    """A JSON document nests deeper than ``MAX_DEPTH``; ``field`` is where (``evals[0].x[3]``), else the
    message gives the line and column."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def too_deep_message() -> str:
    return f"nested deeper than {MAX_DEPTH} levels ({LIMIT_NOTE})"


def _checked(construct: Callable[[Any, ScalarNode], Any]) -> Callable[[Any, ScalarNode], Any]:
    """A scalar constructor whose ValueError (month 13, too many digits) becomes a ConstructorError."""

    def wrapper(loader: Any, node: ScalarNode) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, OverflowError) as exc:
            raise ConstructorError(
                None, None, f"cannot read {node.value[:40]!r}: {exc}", node.start_mark
            ) from None

    return wrapper


class SafeLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """PyYAML's safe loader (libyaml's when available) with a composer that enforces the module's limits."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._anchors: dict[str, Node] = {}
        self._pending: set[str] = set()  # anchors of collections still open
        # Per collection still open, the key node or index being composed: the field path of an error.
        self._open: list[ScalarNode | int | None] = []
        self._measured: dict[int, tuple[int, int]] = {}  # id(node) -> (height, size), this document's nodes
        self._expanded = 0

    def get_single_node(self) -> Node | None:
        self.get_event()
        node = None
        if type(self.peek_event()) is not StreamEndEvent:
            node = self.compose_next_document()
        if type(self.peek_event()) is not StreamEndEvent:
            raise YAMLInputError("expected a single document, found another", self.get_event().start_mark)
        self.get_event()
        return node

    def compose_next_document(self) -> Node:
        """Compose the document that starts at the next event (a DocumentStartEvent)."""
        self.get_event()
        node = self._compose(self.get_event())
        self.get_event()
        self._anchors, self._pending, self._measured = {}, set(), {}
        return node

    def _compose(self, event: Any) -> Node:
        kind = type(event)
        if kind is AliasEvent:
            return self._alias(event)
        anchor = event.anchor
        if anchor is not None and (anchor in self._anchors or anchor in self._pending):
            raise self._error(f"anchor &{anchor} is defined twice", event.start_mark)
        if kind is ScalarEvent:
            tag = event.tag
            if tag is None or tag == "!":
                tag = self.resolve(ScalarNode, event.value, event.implicit)
            node: Node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
        else:
            node = self._collection(event, kind is MappingStartEvent)
        if anchor is not None:
            self._anchors[anchor] = node
        return node

    def _collection(self, event: Any, mapping: bool) -> Node:
        if len(self._open) >= MAX_DEPTH:
            raise self._error(too_deep_message(), event.start_mark)
        node_class = MappingNode if mapping else SequenceNode
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolve(node_class, None, event.implicit)
        node = node_class(tag, [], event.start_mark, None, flow_style=event.flow_style)
        if event.anchor is not None:
            self._pending.add(event.anchor)
        open_ = self._open
        open_.append(None)
        items = node.value
        child = self.get_event()
        if mapping:
            seen: dict[Any, ScalarNode] = {}
            while type(child) is not MappingEndEvent:
                open_[-1] = None
                key = self._compose(child)
                if type(key) is ScalarNode:
                    open_[-1] = key
                    if key.tag != _MERGE_TAG:
                        self._check_unique(key, seen)
                items.append((key, self._compose(self.get_event())))
                child = self.get_event()
        else:
            while type(child) is not SequenceEndEvent:
                open_[-1] = len(items)
                items.append(self._compose(child))
                child = self.get_event()
        node.end_mark = child.end_mark
        open_.pop()
        self._pending.discard(event.anchor)
        return node

    def _check_unique(self, key: ScalarNode, seen: dict[Any, ScalarNode]) -> None:
        identity = key.value if key.tag == _STR_TAG else self.construct_object(key)
        first = seen.setdefault(identity, key)
        if first is not key:
            raise self._error(
                f"duplicate key {key.value!r} (first at line {first.start_mark.line + 1})", key.start_mark
            )

    def _alias(self, event: Any) -> Node:
        node = self._anchors.get(event.anchor)
        if node is None:
            if event.anchor in self._pending:
                raise self._error(f"alias *{event.anchor} is inside the node it names", event.start_mark)
            raise self._error(f"undefined alias *{event.anchor}", event.start_mark)
        if type(node) is not ScalarNode:
            height, size = self._measure(node)
            if len(self._open) + height > MAX_DEPTH:
                raise self._error(f"through alias *{event.anchor}: {too_deep_message()}", event.start_mark)
            self._expanded += size
            if self._expanded > MAX_ALIAS_NODES:
                raise self._error(
                    f"aliases expand to more than {MAX_ALIAS_NODES:,} nodes ({LIMIT_NOTE})", event.start_mark
                )
        return node

    def _measure(self, root: Node) -> tuple[int, int]:
        """(height, node count) of a complete collection node with aliases expanded; memoised, iterative."""
        known = self._measured
        stack = [root]
        while stack:
            node = stack[-1]
            if id(node) in known:
                stack.pop()
                continue
            children = [n for pair in node.value for n in pair] if type(node) is MappingNode else node.value
            nested = [n for n in children if type(n) is not ScalarNode]
            todo = [n for n in nested if id(n) not in known]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            height = 1 + max((known[id(n)][0] for n in nested), default=0)
            size = 1 + len(children) - len(nested) + sum(known[id(n)][1] for n in nested)
            known[id(node)] = (height, size)
        return known[id(root)]

    def restate(self, exc: MarkedYAMLError) -> MarkedYAMLError:
        """libyaml's own nesting limit (1,000 flow levels, hit while it scans ahead) said as assay's."""
        if exc.problem == "exceeded maximum nesting depth" and exc.problem_mark is not None:
            return self._error(too_deep_message(), exc.problem_mark)
        return exc

    def _error(self, problem: str, mark: Mark) -> YAMLInputError:
        parts = [at if isinstance(at, int) else str(at.value) for at in self._open if at is not None]
        return YAMLInputError(problem, mark, short_path(parts))


for _tag, _construct in (
    ("tag:yaml.org,2002:int", SafeConstructor.construct_yaml_int),
    ("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_timestamp),
):
    SafeLoader.add_constructor(_tag, _checked(_construct))
# YAML 1.1 (PyYAML) reads an exponent without a decimal point (``1e-3``) as a string, where YAML 1.2, JSON and
# every user read a number: with strict number fields, ``min_delta: 1e-3`` would be refused as text.
SafeLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$"), list("-+0123456789")
)


class CoreSchemaLoader(SafeLoader):
    """:class:`SafeLoader` with YAML 1.2 core-schema scalars, as promptfoo (js-yaml) reads its files: only
    ``true``/``false`` (in three spellings) are booleans, so ``Yes``, ``No``, ``on`` and ``off`` stay strings;
    integers are decimal, ``0o`` octal or ``0x`` hexadecimal (``010`` is ten, ``1_000`` and ``1:30`` are
    strings)."""


def _construct_core_int(loader: Any, node: ScalarNode) -> int:
    text = str(loader.construct_scalar(node)).lower()
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits.startswith(("0o", "0x")):
        return sign * int(digits[2:], 8 if digits[1] == "o" else 16)
    return sign * int(digits, 10)


CoreSchemaLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_BOOL_TAG, _INT_TAG)]
    for first, resolvers in SafeLoader.yaml_implicit_resolvers.items()
}
CoreSchemaLoader.add_implicit_resolver(
    _BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
CoreSchemaLoader.add_implicit_resolver(
    _INT_TAG, re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
CoreSchemaLoader.add_constructor(_INT_TAG, _checked(_construct_core_int))


def describe_yaml_error(exc: yaml.YAMLError) -> str:
    """``line 3, column 7: found duplicate key ...``: the problem and where, in one line."""
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return where + problem


def _digest(text: str) -> bytes:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16)
    digest.update(b"%d/%d" % (MAX_DEPTH, MAX_ALIAS_NODES))  # parsed under the limits in force
    return digest.digest()


def _remember(text: str) -> None:
    with _parsed_lock:
        _PARSED[_digest(text)] = None
        while len(_PARSED) > _PARSED_MAX:
            _PARSED.popitem(last=False)


def load_yaml(text: str, *, core_schema: bool = False) -> Any:
    """The one document in ``text`` (None when empty). Raises ``yaml.YAMLError``; see the module docstring.
    ``core_schema`` reads scalars by YAML 1.2's core schema (:class:`CoreSchemaLoader`)."""
    loader = (CoreSchemaLoader if core_schema else SafeLoader)(text)
    try:
        data = loader.get_single_data()
    except MarkedYAMLError as exc:
        raise loader.restate(exc) from None
    finally:
        loader.dispose()
    _remember(text)
    return data


def check_yaml_documents(text: str) -> None:
    """Raise as :func:`load_yaml_documents` would, without parsing a text that parsed recently."""
    with _parsed_lock:
        if _digest(text) in _PARSED:
            return
    load_yaml_documents(text)


def load_yaml_documents(text: str) -> list[Any]:
    """Every document in ``text`` (``---`` separated), with the same limits as :func:`load_yaml`."""
    loader = SafeLoader(text)
    try:
        loader.get_event()
        documents = []
        while type(loader.peek_event()) is not StreamEndEvent:
            documents.append(loader.construct_document(loader.compose_next_document()))
    except MarkedYAMLError as exc:
        raise loader.restate(exc) from None
    finally:
        loader.dispose()
    _remember(text)
    return documents


def load_json(text: str) -> Any:
    """``json.loads`` that raises NestingError beyond ``MAX_DEPTH`` levels (and ``json.JSONDecodeError`` or
    ``ValueError`` for bad syntax or numbers), never ``RecursionError``."""
    try:
        data = json.loads(text)
    except (RecursionError, json.JSONDecodeError) as exc:
        # Too deep for the json module (before 3.13), or a syntax error past a point already too deep (3.13
        # parses deeper): the nesting is the first problem either way.
        found = _too_deep_in_text(text)
        if found is None:
            raise exc from None
        where, path = found
        raise NestingError(f"{where}: {too_deep_message()}", short_path(path)) from None
    if text.count("[") + text.count("{") > MAX_DEPTH:
        deep = too_deep_at(data)
        if deep is not None:  # parsed (Python 3.13's json goes deeper): say where, as when it does not
            found = _too_deep_in_text(text)
            where = found[0] if found else "column 1"
            raise NestingError(f"{where}: {too_deep_message()}", short_path(deep))
    return data


def _too_deep_in_text(text: str) -> tuple[str, list[str | int]] | None:
    """Where the first bracket beyond ``MAX_DEPTH`` is (``line 3, column 7``, or ``column 7`` in one-line
    text) and its field path, in JSON text too deep for ``json.loads``."""
    path: list[Any] = []  # per open bracket: the key or index being read (None before an object's first key)
    for token in _JSON_TOKEN.finditer(text):
        char = token.group()[0]
        if char == '"' and token.group().endswith(":") and path:
            path[-1] = _json_key(token.group()[:-1].rstrip())
        elif char in "[{":
            if len(path) >= MAX_DEPTH:
                start = token.start()
                line = text.count("\n", 0, start) + 1
                column = start - text.rfind("\n", 0, start)
                where = f"line {line}, column {column}" if "\n" in text else f"column {column}"
                return where, [part for part in path if part is not None]
            path.append(0 if char == "[" else None)
        elif char in "]}" and path:
            path.pop()
        elif char == "," and path and isinstance(path[-1], int):
            path[-1] += 1
    return None


def _json_key(token: str) -> str:
    try:
        return str(json.loads(token))
    except ValueError:
        return token.strip('"')


def too_deep_at(data: Any) -> list[str | int] | None:
    """The path to the first list or mapping nested deeper than ``MAX_DEPTH`` in parsed JSON, else None."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            items: Any = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        if len(path) >= MAX_DEPTH:
            return list(path)
        stack.extend((child, (*path, key)) for key, child in items if isinstance(child, dict | list))
    return None


def short_path(parts: list[str | int]) -> str | None:
    """``a.b[0]`` for a field path, its first five parts and ``...`` when longer than six."""
    if len(parts) > 6:
        return field_path(parts[:5]) + "..."
    return field_path(parts) or None
