"""The names of the mutation layers: surface (1), core (2), architecture (3), in one place.

A layer is how deep a proposed change goes; it is never written L1–L3, which name the verification tiers
(L1 static, L2 dev, L3 holdout + regression). Runs store a layer as its number (``results.tsv``, the events,
the run store), so runs recorded before the names still read; everything shown to people, and the config,
use the names. A leaf module: the config, the proposers, the loop and the report all import it."""

from __future__ import annotations

import difflib
import re

LAYER_NAMES: dict[int, str] = {1: "surface", 2: "core", 3: "architecture"}
LAYER_WIDTH = max(len(name) for name in LAYER_NAMES.values())  # to line layers up in a column
_NUMBERS = {name: number for number, name in LAYER_NAMES.items()}
_TIER = re.compile(r"l([123])", re.IGNORECASE)
_KNOWN = "expected surface, core or architecture (or their numbers 1, 2 or 3)"


def layer_name(layer: int) -> str:
    """The name shown for ``layer`` (its number, as stored): ``2`` -> ``core``."""
    return LAYER_NAMES.get(layer, f"layer {layer}")


def layer_number(value: object) -> object:
    """A layer as the config may give it (a name such as ``core``, or its number) as its number. Anything
    else raises ValueError with one line naming the closest layer (or the known ones); a value of another
    type (a float, a list) is returned as it is, for the field's own type check to refuse."""
    if isinstance(value, int):
        if value in LAYER_NAMES and not isinstance(value, bool):
            return value
        raise ValueError(f"unknown layer {value}; {_KNOWN}")
    if not isinstance(value, str):
        return value
    key = value.strip().lower()
    if key in _NUMBERS:
        return _NUMBERS[key]
    if key.isdigit() and int(key) in LAYER_NAMES:
        raise ValueError(f"{value!r} is text: write the layer as its number ({int(key)}) or its name")
    tier = _TIER.fullmatch(key)
    if tier:
        name = LAYER_NAMES[int(tier.group(1))]
        raise ValueError(f"{value!r} names a verification tier, not a layer; did you mean {name!r}?")
    close = difflib.get_close_matches(key, list(LAYER_NAMES.values()), n=1, cutoff=0.6)
    raise ValueError(f"unknown layer {value!r}; " + (f"did you mean {close[0]!r}?" if close else _KNOWN))
