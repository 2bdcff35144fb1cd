"""Building the gate a run uses, by name: the one place that knows the aliases and the noise rule.

``ratchet`` (the default) is the strict AND rule when the baseline's runs agreed and the paired sequential
test when they did not; ``ratchet_strict`` is always the strict rule; ``noisy`` (alias ``paired``) is always
the paired test; any other registered name is that gate. Options a gate does not take are an error, except
that the strict rule's own options are dropped when ``ratchet`` becomes the paired gate.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping

from assay.gates.backpressure import BackpressureGate
from assay.gates.base import GATES, Gate
from assay.gates.paired import PairedGate
from assay.gates.ratchet import RatchetGate
from assay.gates.relax import floor
from assay.gates.trend import TrendGate
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


def min_gain(name: str, options: Mapping[str, float | int], *, noisy: bool = False) -> float:
    """The smallest rise of the dev score the gate ``name`` keeps on its own, so a smaller one is a tie (for a
    baseline that was ``noisy`` or not): backpressure's ``min_delta``; the fully relaxed one of the trend gate
    and of the strict ratchet (which also keeps a higher pass rate with any rise); 0 for the paired test and
    gates of one's own (any rise they keep is one)."""
    cls = GATES.get(name) if name in GATES else None
    if cls is None or issubclass(cls, PairedGate) or (name == SWITCHES_WHEN_NOISY and noisy):
        return 0.0
    if not issubclass(cls, (BackpressureGate, TrendGate, RatchetGate)):
        return 0.0
    parameters = inspect.signature(cls).parameters
    min_delta = float(options.get("min_delta", parameters["min_delta"].default))
    if issubclass(cls, BackpressureGate):
        return min_delta
    return floor(min_delta, float(options.get("relax_factor", parameters["relax_factor"].default)))
