"""Presets: budgets, L3 cadence and judge votes for ``quick``, ``standard`` and ``deep`` runs.

Anything set explicitly in ``evolve:`` wins over the preset.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.config import EvolveConfig


@dataclass(frozen=True)
class Preset:
    max_generations: int
    wall_clock_s: float
    plateau: int
    l3_every: int
    judge_votes: int


PRESETS: dict[str, Preset] = {
    "quick": Preset(max_generations=20, wall_clock_s=180, plateau=10, l3_every=5, judge_votes=1),
    "standard": Preset(max_generations=100, wall_clock_s=3600, plateau=25, l3_every=5, judge_votes=3),
    "deep": Preset(max_generations=500, wall_clock_s=6 * 3600, plateau=60, l3_every=10, judge_votes=5),
}


@dataclass(frozen=True)
class EvolveSettings:
    """An ``evolve:`` section with the preset applied: every limit has a value."""

    max_generations: int
    wall_clock_s: float
    plateau: int
    l3_every: int
    judge_votes: int


def resolve(evolve: EvolveConfig, preset: str | None = None) -> EvolveSettings:
    """Apply the preset (``preset`` overrides the one in the config, as ``--preset`` does)."""
    base = PRESETS[preset or evolve.preset]
    return EvolveSettings(
        max_generations=evolve.max_generations or base.max_generations,
        wall_clock_s=evolve.wall_clock_s or base.wall_clock_s,
        plateau=evolve.plateau or base.plateau,
        l3_every=evolve.l3_every or base.l3_every,
        judge_votes=base.judge_votes,
    )
