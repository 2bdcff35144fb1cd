"""The gate factory: names, aliases and the switch of ``ratchet`` to the paired test when the baseline is noisy."""

from __future__ import annotations

import pytest

from assay.gates.backpressure import BackpressureGate
from assay.gates.factory import is_paired, make_gate, min_gain
from assay.gates.paired import PairedGate
from assay.gates.ratchet import RatchetGate
from assay.registry import UnknownName
from assay.stats import SequentialOptions


def test_ratchet_is_strict_when_deterministic_and_paired_when_noisy() -> None:
    options = {"noise_reruns": 5, "cost_factor": 3.0}
    strict = make_gate("ratchet", options)
    assert type(strict) is RatchetGate and strict.noise_reruns == 5 and not is_paired(strict)
    noisy = make_gate("ratchet", options, noisy=True, sequential=SequentialOptions(alpha=0.01))
    assert isinstance(noisy, PairedGate) and is_paired(noisy)
    assert (
        noisy.cost_factor == 3.0 and noisy.options.alpha == 0.01
    )  # the strict rule's noise_reruns is dropped


@pytest.mark.parametrize("name", ["noisy", "paired"])
def test_the_paired_names_are_always_paired(name: str) -> None:
    assert is_paired(make_gate(name, {}, noisy=False))


def test_ratchet_strict_never_switches_and_others_are_themselves() -> None:
    assert type(make_gate("ratchet_strict", {}, noisy=True)) is RatchetGate
    assert isinstance(make_gate("backpressure", {"min_delta": 0.01}, noisy=True), BackpressureGate)
    with pytest.raises(UnknownName, match="backpressure"):
        make_gate("backpresure", {})
    with pytest.raises(TypeError):
        make_gate("backpressure", {"no_such_option": 1})


def test_min_gain_is_the_smallest_rise_a_gate_keeps_on_its_own() -> None:
    assert min_gain("ratchet", {}) == 0.0 and min_gain("noisy", {}) == 0.0
    # The strict ratchet's fully relaxed min_delta; none once a noisy baseline made it the paired test.
    assert min_gain("ratchet", {"min_delta": 0.008}) == pytest.approx(0.001)
    assert min_gain("ratchet_strict", {"min_delta": 0.008}, noisy=True) == pytest.approx(0.001)
    assert min_gain("ratchet", {"min_delta": 0.008}, noisy=True) == 0.0
    assert min_gain("backpressure", {"min_delta": 0.01}) == 0.01
    assert min_gain("backpressure", {}) == 0.005  # the gate's default
    assert min_gain("trend", {"min_delta": 0.008, "relax_factor": 0.5}) == pytest.approx(0.001)
    assert min_gain("no-such-gate", {}) == 0.0


def test_the_presets_min_delta_reaches_the_strict_ratchet_and_not_the_paired_gate() -> None:
    from assay.config import EvolveConfig
    from assay.presets import resolve

    options = resolve(EvolveConfig(preset="quick")).gate_options
    strict = make_gate("ratchet", options)
    assert isinstance(strict, RatchetGate) and strict.relaxation.min_delta == 0.01
    assert is_paired(make_gate("ratchet", options, noisy=True))  # its min_delta dropped
