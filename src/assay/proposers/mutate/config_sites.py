"""Where a config file can be mutated: one ``Site`` per scalar under a key and per list.

JSON and YAML are parsed, changed and written back whole (``json.dumps`` with the file's indentation;
``yaml.safe_dump(sort_keys=False)``), so YAML comments are lost. TOML is edited in place, see ``toml_sites``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from assay.safeload import load_json, load_yaml

Path = tuple[Any, ...]


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


def _label(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(root)"


def _replaced(data: Any, path: Path, new: Any) -> Any:
    if not path:
        return new
    result = copy.deepcopy(data)
    target = result
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = new
    return result


def tree_sites(data: Any, dump: Callable[[Any], str]) -> list[Site]:
    """Sites of a parsed JSON or YAML document; ``dump`` renders a whole changed document."""
    sites: list[Site] = []

    def setter(path: Path) -> Callable[[Any], str | None]:
        return lambda new: dump(_replaced(data, path, new))

    def visit(value: Any, path: Path, key: str | None) -> None:
        parent = _label(path[:-1])
        if isinstance(value, dict):
            for k, v in value.items():
                visit(v, (*path, k), str(k))
        elif isinstance(value, list):
            sites.append(Site(_label(path), key, parent, value, setter(path)))
            for i, item in enumerate(value):
                if isinstance(item, dict | list):
                    visit(item, (*path, i), None)
        elif isinstance(value, str | int | float):
            sites.append(Site(_label(path), key, parent, value, setter(path)))

    visit(data, (), None)
    return sites


def _json_indent(text: str) -> int | str | None:
    lines = text.splitlines()
    for line in lines[1:]:
        stripped = line.lstrip()
        if stripped and len(stripped) < len(line):
            prefix = line[: len(line) - len(stripped)]
            return "\t" if prefix.startswith("\t") else len(prefix)
    return None if len(lines) <= 1 else 2


def json_sites(text: str) -> list[Site]:
    data = load_json(text)
    indent = _json_indent(text)
    ending = "\n" if text.endswith("\n") else ""
    return tree_sites(data, lambda new: json.dumps(new, indent=indent, ensure_ascii=False) + ending)


def yaml_sites(text: str) -> list[Site]:
    data = load_yaml(text)
    return tree_sites(data, lambda new: yaml.safe_dump(new, sort_keys=False, allow_unicode=True))
