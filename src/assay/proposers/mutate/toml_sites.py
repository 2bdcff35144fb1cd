"""TOML sites, edited in place through tomlkit: only the changed value is written again; comments, key order,
quoting, layout and the other items of a list stay as the user wrote them.

Every scalar (string, number, boolean) under a key is a site, in tables, arrays of tables and inline tables, and
so is every array. A list changes item by item (:func:`~.config_sites.list_edit`): a value set, an item
removed, duplicated or moved, the others with their comments as they were.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Array

from assay.proposers.mutate.config_sites import Site, label, list_edit
from assay.proposers.mutate.spans import Path, equal_but_at, value_at


def toml_sites(text: str) -> list[Site]:
    """Sites of a TOML document (raises ``tomllib.TOMLDecodeError`` when it does not parse)."""
    data = tomllib.loads(text)
    try:
        document = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ValueError(str(exc)) from None
    sites: list[Site] = []

    def visit(item: Any, value: Any, path: Path, key: str | None) -> None:
        parent = label(path[:-1])
        if isinstance(value, dict):
            for k, v in value.items():
                visit(item[k], v, (*path, k), str(k))
        elif isinstance(item, AoT):
            for i, table in enumerate(value):
                visit(item[i], table, (*path, i), None)
        elif isinstance(value, list):
            sites.append(Site(label(path), key, parent, value, _writer(text, data, path)))
            for i, element in enumerate(value):
                if isinstance(element, dict | list):
                    visit(item[i], element, (*path, i), None)
        elif isinstance(value, str | int | float):
            sites.append(Site(label(path), key, parent, value, _writer(text, data, path)))

    visit(document, data, (), None)
    return sites


def _writer(text: str, data: Any, path: Path) -> Callable[[Any], str | None]:
    def write(new: Any) -> str | None:
        try:
            document = tomlkit.parse(text)
            container: Any = document
            for part in path[:-1]:
                container = container[part]
            current = container[path[-1]]
            if isinstance(new, list) and isinstance(current, Array):
                if not _edit_array(current, value_at(data, path), new):
                    return None
            else:
                container[path[-1]] = new
            changed = tomlkit.dumps(document)
            after = tomllib.loads(changed)
        except (TOMLKitError, tomllib.TOMLDecodeError, KeyError, IndexError, TypeError, ValueError):
            return None
        return changed if value_at(after, path) == new and equal_but_at(data, after, path) else None

    return write


def _edit_array(array: Array, old: list[Any], new: list[Any]) -> bool:
    """Change ``array`` from ``old`` to ``new`` item by item; False when the change is not one list_edit
    knows."""
    edit = list_edit(old, new)
    if edit is None:
        return False
    if edit.at is not None and len(new) < len(old):
        del array[edit.at]
    elif edit.at is not None:
        array.insert(edit.at, new[edit.at])
    else:
        for i, source in enumerate(edit.plan):
            if source != i:
                array[i] = new[i]
    return True
