"""Presets: budgets, L3 cadence, judge votes and, as in autocontext, the gate's strictness and the matches per
generation for ``quick``, ``standard`` and ``deep`` runs.

========  ===========  ==========  =======  ========  ===========  =========  ======================
preset    generations  wall clock  plateau  L3 every  judge votes  min_delta  matches per generation
========  ===========  ==========  =======  ========  ===========  =========  ======================
quick     20           180 s       10       5         1            0.01       2
standard  100          1 h         25       5         3            0.005      3
deep      500          6 h         60       10        5            0.002      5
========  ===========  ==========  =======  ========  ===========  =========  ======================

``min_delta`` and ``matches_per_generation`` are the two knobs seed 000 names. ``min_delta`` is the rise of the
dev mean score the gate asks for (a quick run takes only clear gains; a deep one, which plays more matches for
steadier scores, takes finer ones): the ratchet's at an equal pass rate (a higher pass rate is progress on its
own), backpressure's, and trend's; the ratchet and trend relax it as seed 000's trend-aware gate does (halved
after 3 flat generations and after 3 rollbacks in a row, down to min_delta / 8, back on a keep;
:mod:`assay.gates.relax`). The paired gate, which judges a noisy baseline, takes none. Anything set explicitly in
``evolve:`` (``gate_options.min_delta``, ``tournament.matches_per_generation``, the limits) wins over the preset.

The offline default proposer (``mutate`` with tuning) has no plateau rule unless ``evolve.plateau`` sets one: its
candidates cost no tokens, and its gains come late and in steps (a structural edit first scores like its parent
and pays only once the tuner has moved its new numbers), so the generation limit and the wall clock bound its runs.
Measured on FunSearch's bin packing task: a run whose first keep came at generation 73 of 100.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # `assay evolve --help` reads the presets: no pydantic import for it
    from assay.config import EvolveConfig


@dataclass(frozen=True)
class Preset:
    max_generations: int
    wall_clock_s: float
    plateau: int
    l3_every: int
    judge_votes: int
    min_delta: float
    matches_per_generation: int


THRESHOLD_GATES = ("ratchet", "ratchet_strict", "backpressure", "trend")  # the gates that take ``min_delta``

PRESETS: dict[str, Preset] = {
    "quick": Preset(
        max_generations=20,
        wall_clock_s=180,
        plateau=10,
        l3_every=5,
        judge_votes=1,
        min_delta=0.01,
        matches_per_generation=2,
    ),
    "standard": Preset(
        max_generations=100,
        wall_clock_s=3600,
        plateau=25,
        l3_every=5,
        judge_votes=3,
        min_delta=0.005,
        matches_per_generation=3,
    ),
    "deep": Preset(
        max_generations=500,
        wall_clock_s=6 * 3600,
        plateau=60,
        l3_every=10,
        judge_votes=5,
        min_delta=0.002,
        matches_per_generation=5,
    ),
}


def _clock(seconds: float) -> str:
    if seconds % 3600 == 0:
        return f"{seconds / 3600:g} h"
    return f"{seconds / 60:g} min" if seconds % 60 == 0 and seconds >= 600 else f"{seconds:g} s"


def budgets() -> str:
    """Each preset's budgets in a few words, for ``assay evolve --help``: ``quick: 20 generations, 180 s wall
    clock, plateau 10; ...``."""
    return "; ".join(
        f"{name}: {p.max_generations} generations, {_clock(p.wall_clock_s)} wall clock, plateau {p.plateau}"
        for name, p in PRESETS.items()
    )


@dataclass(frozen=True)
class EvolveSettings:
    """An ``evolve:`` section with the preset applied: every limit has a value."""

    max_generations: int
    wall_clock_s: float
    plateau: int
    l3_every: int
    judge_votes: int
    gate_options: dict[str, float | int]
    matches_per_generation: int


def resolve(evolve: EvolveConfig, preset: str | None = None) -> EvolveSettings:
    """Apply the preset (``preset`` overrides the one in the config, as ``--preset`` does)."""
    base = PRESETS[preset or evolve.preset]
    max_generations = evolve.max_generations or base.max_generations
    offline = evolve.proposer.type == "mutate" and evolve.proposer.tuning
    return EvolveSettings(
        max_generations=max_generations,
        wall_clock_s=evolve.wall_clock_s or base.wall_clock_s,
        plateau=evolve.plateau or (max_generations if offline else base.plateau),
        l3_every=evolve.l3_every or base.l3_every,
        judge_votes=base.judge_votes,
        gate_options=_gate_options(evolve, base),
        matches_per_generation=(
            evolve.tournament.matches_per_generation
            if evolve.tournament.matches_per_generation is not None
            else base.matches_per_generation
        ),
    )


def _gate_options(evolve: EvolveConfig, base: Preset) -> dict[str, float | int]:
    """The gate's options with the preset's ``min_delta`` for the gates that take one (the ratchet passes it on
    only when it stays strict: the paired gate it becomes for a noisy baseline drops it)."""
    options = dict(evolve.gate_options)
    if evolve.gate in THRESHOLD_GATES:
        options.setdefault("min_delta", base.min_delta)
    return options
