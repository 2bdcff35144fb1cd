"""Building the gate a run uses, by name: the one place that knows the aliases and the noise rule.

``ratchet`` (the default) is the strict AND rule when the baseline's runs agreed and the paired sequential
test when they did not; ``ratchet_strict`` is always the strict rule; ``noisy`` (alias ``paired``) is always
the paired test; any other registered name is that gate. Options a gate does not take are an error, except
that the strict rule's own options are dropped when ``ratchet`` becomes the paired gate.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping

from assay.gates.base import GATES, Gate
from assay.gates.paired import PairedGate
from assay.stats import SequentialOptions

SWITCHES_WHEN_NOISY = "ratchet"


def make_gate(
    name: str,
    options: Mapping[str, float | int],
    *,
    noisy: bool = False,
    sequential: SequentialOptions | None = None,
) -> Gate:
    """The gate called ``name`` with ``options``, for a baseline that was ``noisy`` or not (UnknownName for
    a name no gate has, TypeError for an option it does not take)."""
    cls = GATES.get(name)
    if issubclass(cls, PairedGate) or (name == SWITCHES_WHEN_NOISY and noisy):
        accepted = inspect.signature(PairedGate).parameters
        kept = {k: float(v) for k, v in options.items() if k in accepted}
        return PairedGate(options=sequential or SequentialOptions(), **kept)
    return cls(**options)


def is_paired(gate: Gate) -> bool:
    """Whether ``gate`` judges with the paired test (and so needs fresh runs on both sides)."""
    return isinstance(gate, PairedGate)
