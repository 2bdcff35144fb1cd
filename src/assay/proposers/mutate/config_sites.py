"""Where a config file can be mutated: one ``Site`` per scalar under a key and per list.

Every write replaces the changed value's own bytes and nothing else (:mod:`.spans` for JSON and YAML,
:mod:`.toml_sites` for TOML): comments, key order, quoting, anchors, indentation and blank lines stay as the
user wrote them. A list changes item by item — a value set, an item removed, duplicated or moved — with its
other items and separators as they were. A write whose result would not parse back to the intended value
gives None.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from assay.proposers.mutate.spans import (
    Path,
    Spans,
    json_spans,
    same_except,
    scalar_token,
    value_at,
    yaml_spans,
)
from assay.safeload import load_json, load_yaml


@dataclass(frozen=True)
class Site:
    """One editable value: a scalar under a mapping key, or a whole list.

    ``label`` says where it is (``search.temperature``, ``models[2]``), ``key`` is the mapping key it sits
    under (None for list items), ``parent`` identifies the enclosing mapping (sites sharing it are siblings),
    and ``write(new_value)`` returns the file's new text, or None if it cannot be written.
    """

    label: str
    key: str | None
    parent: str
    value: Any
    write: Callable[[Any], str | None]


def label(path: Path) -> str:
    """A path as a site's label: ``search.temperature``, ``models[2].name``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(root)"


@dataclass(frozen=True)
class ListEdit:
    """How a list becomes another, item by item: ``plan[i]`` is the old index the new item ``i`` is a copy of,
    or None for a new value (``new[i]``); ``gaps`` the separators after the first ``len(plan) - 1`` items, as
    indexes of the old separators (-1: the list's separator for a list that had none); ``at`` the index of the
    old item removed or the new item inserted (None when the length stays)."""

    plan: list[int | None]
    gaps: list[int]
    at: int | None = None


def list_edit(old: Sequence[Any], new: Sequence[Any]) -> ListEdit | None:
    """The item-by-item edit from ``old`` to ``new``: values set in place, one item removed (its separator
    with it), one inserted (a copy of the separator before it), or items moved; None for anything else."""
    n, m = len(old), len(new)
    if m == n:
        used: set[int] = set()
        plan: list[int | None] = []
        for i, item in enumerate(new):
            j = i if old[i] == item else next((k for k in range(n) if k not in used and old[k] == item), None)
            if j is not None and j in used:
                j = None
            if j is not None:
                used.add(j)
            plan.append(j)
        return ListEdit(plan, list(range(n - 1)))
    if m == n - 1:
        r = next((i for i in range(m) if old[i] != new[i]), m)
        if list(old[:r]) + list(old[r + 1 :]) != list(new):
            return None
        gaps = [g for g in range(n - 1) if g != min(r, n - 2)]
        return ListEdit([k for k in range(n) if k != r], gaps, r)
    if m == n + 1:
        r = next((i for i in range(n) if old[i] != new[i]), n)
        if list(new[:r]) + list(new[r + 1 :]) != list(old):
            return None
        source = next((k for k in range(n) if old[k] == new[r]), None)
        plan = [*range(r), source, *range(r, n)]
        near = min(r, n - 2) if n > 1 else -1
        cut = min(r, n - 1)
        return ListEdit(plan, [*range(cut), near, *range(cut, n - 1)], r)
    return None


def _splice(text: str, start: int, end: int, token: str) -> str:
    return text[:start] + token + text[end:]


def _write_scalar(spans: Spans, path: Path, new: Any) -> str | None:
    start, end = spans.at[path]
    token = scalar_token(spans.kind, new, spans.text[start:end])
    return None if token is None else _splice(spans.text, start, end, token)


def _write_list(spans: Spans, path: Path, new: list[Any]) -> str | None:
    old = value_at(spans.data, path)
    items = spans.items.get(path)
    edit = list_edit(old, new)
    if edit is None or items is None or len(items) != len(old) or not items:
        return None
    text = spans.text
    seps = [text[items[k][1] : items[k + 1][0]] for k in range(len(items) - 1)]
    pieces: list[str] = []
    for i, source in enumerate(edit.plan):
        if source is not None:
            pieces.append(text[items[source][0] : items[source][1]])
        else:
            near = items[min(i, len(items) - 1)]
            token = scalar_token(spans.kind, new[i], text[near[0] : near[1]])
            if token is None:
                return None
            pieces.append(token)
        if i < len(edit.plan) - 1:
            gap = edit.gaps[i]
            pieces.append(seps[gap] if gap >= 0 else spans.gap[path])
    return _splice(text, items[0][0], items[-1][1], "".join(pieces))


def _writer(spans: Spans, path: Path) -> Callable[[Any], str | None]:
    def write(new: Any) -> str | None:
        try:
            changed = (
                _write_list(spans, path, new) if isinstance(new, list) else _write_scalar(spans, path, new)
            )
        except (KeyError, IndexError, TypeError):
            return None
        if changed is None or not same_except(spans.text, changed, path, spans.kind):
            return None
        loaded = load_json(changed) if spans.kind == "json" else load_yaml(changed)
        return changed if value_at(loaded, path) == new else None

    return write


def span_sites(spans: Spans) -> list[Site]:
    """Sites of a parsed JSON or YAML document: each scalar under a key and each list, where it stands in the
    text (a value shown through an alias or a merge key is a site once, at its anchor)."""
    sites: list[Site] = []

    def visit(value: Any, path: Path, key: str | None) -> None:
        if path not in spans.at:
            return
        parent = label(path[:-1])
        if isinstance(value, dict):
            for k, v in value.items():
                visit(v, (*path, k), str(k))
        elif isinstance(value, list):
            sites.append(Site(label(path), key, parent, value, _writer(spans, path)))
            for i, item in enumerate(value):
                if isinstance(item, dict | list):
                    visit(item, (*path, i), None)
        elif isinstance(value, str | int | float):
            sites.append(Site(label(path), key, parent, value, _writer(spans, path)))

    visit(spans.data, (), None)
    return sites


def json_sites(text: str) -> list[Site]:
    return span_sites(json_spans(text))


def yaml_sites(text: str) -> list[Site]:
    return span_sites(yaml_spans(text))
