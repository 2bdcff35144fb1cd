"""Config operators (JSON, YAML, TOML), by layer.

Surface: perturb one number (in a value or a list), flip one boolean. Core: switch one string to
another value seen under the same key name or in a sibling list (an "enum flip"; skipped when there is none),
swap two adjacent list items. Architecture: remove or duplicate one list item.
Every result must parse again and differ from the original document.
"""

from __future__ import annotations

import json
import math
import random
import tomllib
from collections.abc import Callable, Iterator
from typing import Any

import yaml

from assay.proposers.mutate.base import Mutation, perturb_number, shorten
from assay.proposers.mutate.config_sites import Site, json_sites, yaml_sites
from assay.proposers.mutate.toml_sites import toml_sites
from assay.safeload import load_json, load_yaml

Change = tuple[Site, Any, str]  # site, its new value, what changed
SiteOp = Callable[[list[Site], random.Random], Change | None]


def config_sites(kind: str, text: str) -> list[Site]:
    """Sites of a ``json``, ``yaml`` or ``toml`` file; empty when the file does not parse."""
    readers = {"json": json_sites, "yaml": yaml_sites, "toml": toml_sites}
    try:
        return readers[kind](text)
    except (ValueError, yaml.YAMLError, RecursionError):
        return []


def parse_config(kind: str, text: str) -> Any:
    """The parsed document; raises ``ValueError`` or ``yaml.YAMLError`` when it does not parse."""
    if kind == "json":
        return load_json(text)
    if kind == "yaml":
        return load_yaml(text)
    return tomllib.loads(text)


def _show(value: Any) -> str:
    return shorten(json.dumps(value, ensure_ascii=False, default=str), 40)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _scalars(sites: list[Site], test: Callable[[Any], bool]) -> Iterator[tuple[Site, int | None]]:
    """(site, None) for matching scalar sites, (site, i) for matching items of list sites."""
    for site in sites:
        if isinstance(site.value, list):
            yield from ((site, i) for i, item in enumerate(site.value) if test(item))
        elif test(site.value):
            yield site, None


def _set(site: Site, index: int | None, new: Any) -> Any:
    if index is None:
        return new
    return [*site.value[:index], new, *site.value[index + 1 :]]


def numeric(sites: list[Site], rng: random.Random) -> Change | None:
    found = list(_scalars(sites, _is_number))
    if not found:
        return None
    site, index = rng.choice(found)
    old = site.value if index is None else site.value[index]
    new = perturb_number(old, rng)
    where = site.label if index is None else f"{site.label}[{index}]"
    return site, _set(site, index, new), f"changed {where} from {_show(old)} to {_show(new)}"


def boolean(sites: list[Site], rng: random.Random) -> Change | None:
    found = list(_scalars(sites, lambda v: isinstance(v, bool)))
    if not found:
        return None
    site, index = rng.choice(found)
    old = site.value if index is None else site.value[index]
    where = site.label if index is None else f"{site.label}[{index}]"
    return site, _set(site, index, not old), f"flipped {where} from {_show(old)} to {_show(not old)}"


ENUM_LISTS = frozenset({"choices", "options", "values", "allowed", "enum", "candidates", "alternatives"})


def _lists_values_of(key: str, list_key: str | None) -> bool:
    """Whether a sibling list named ``list_key`` plausibly holds the values of ``key`` (``modes`` for ``mode``)."""
    if list_key is None:
        return False
    a, b = key.lower(), list_key.lower()
    common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return b in ENUM_LISTS or common >= max(3, len(a) - 2)


def enum(sites: list[Site], rng: random.Random) -> Change | None:
    """A string under a key becomes another string seen under the same key name or in a sibling list that
    holds its values (``modes: [...]`` beside ``mode:``, or a list named ``choices``/``options``/...)."""
    by_key: dict[str, dict[str, None]] = {}  # ordered sets of the strings seen under each key name
    lists_by_parent: dict[str, list[Site]] = {}
    for site in sites:
        if site.key is None:
            continue
        values = site.value if isinstance(site.value, list) else [site.value]
        by_key.setdefault(site.key, {}).update(dict.fromkeys(v for v in values if isinstance(v, str)))
        if isinstance(site.value, list):
            lists_by_parent.setdefault(site.parent, []).append(site)

    def options(site: Site) -> list[str]:
        pool = dict(by_key[site.key])  # type: ignore[index]
        for other in lists_by_parent.get(site.parent, []):
            if _lists_values_of(site.key, other.key):  # type: ignore[arg-type]
                pool.update(dict.fromkeys(v for v in other.value if isinstance(v, str)))
        pool.pop(site.value, None)
        return list(pool)

    found = [
        site for site in sites
        if isinstance(site.value, str) and site.key is not None
        and (len(by_key[site.key]) > 1 or (site.parent in lists_by_parent and options(site)))
    ]  # fmt: skip
    if not found:
        return None
    site = rng.choice(found)
    new = rng.choice(options(site))
    return site, new, f"switched {site.label} from {_show(site.value)} to {_show(new)}"


def _lists(sites: list[Site], minimum: int) -> list[Site]:
    return [s for s in sites if isinstance(s.value, list) and len(s.value) >= minimum]


def list_reorder(sites: list[Site], rng: random.Random) -> Change | None:
    found = [
        (s, i) for s in _lists(sites, 2) for i in range(len(s.value) - 1) if s.value[i] != s.value[i + 1]
    ]
    if not found:
        return None
    site, i = rng.choice(found)
    items = list(site.value)
    items[i], items[i + 1] = items[i + 1], items[i]
    return site, items, f"swapped items {i} and {i + 1} of {site.label}"


def list_remove(sites: list[Site], rng: random.Random) -> Change | None:
    found = [(s, i) for s in _lists(sites, 2) for i in range(len(s.value))]
    if not found:
        return None
    site, i = rng.choice(found)
    return (
        site,
        site.value[:i] + site.value[i + 1 :],
        f"removed item {i} ({_show(site.value[i])}) of {site.label}",
    )


def list_duplicate(sites: list[Site], rng: random.Random) -> Change | None:
    found = [(s, i) for s in _lists(sites, 1) for i in range(len(s.value))]
    if not found:
        return None
    site, i = rng.choice(found)
    items = [*site.value[: i + 1], site.value[i], *site.value[i + 1 :]]
    return site, items, f"duplicated item {i} ({_show(site.value[i])}) of {site.label}"


def apply_config(
    name: str, op: SiteOp, kind: str, path: str, text: str, rng: random.Random
) -> Mutation | None:
    """Run a site operator on one config file; the result must parse and differ from the original."""
    sites = config_sites(kind, text)
    change = op(sites, rng) if sites else None
    if change is None:
        return None
    site, new_value, description = change
    new_text = site.write(new_value)
    if new_text is None or new_text == text:
        return None
    try:
        if parse_config(kind, new_text) == parse_config(kind, text):
            return None
    except (ValueError, yaml.YAMLError):
        return None
    return Mutation(path, new_text, f"{kind}: {description}", name, (f"{path}:{site.label}",))
