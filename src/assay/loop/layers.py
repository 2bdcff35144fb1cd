"""Layers of change (named in :mod:`assay.layer_names`): surface (1), core (2), architecture (3). Three
discards in a row at a layer move the proposer to the next one; when the last layer is exhausted the run
stops, unless the layers cycle (the offline default, whose numeric tuning goes on at every layer: there the
plateau rule ends a stuck run)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LayerTracker:
    layers: list[int] = field(default_factory=lambda: [1, 2, 3])
    discards_per_layer: int = 3
    cycle: bool = False  # after the last layer, start again at the first (the run is never "exhausted")
    position: int = 0
    discards: int = 0

    @property
    def current(self) -> int:
        return self.layers[min(self.position, len(self.layers) - 1)]

    @property
    def exhausted(self) -> bool:
        return self.position >= len(self.layers)

    def promotion_due(self) -> bool:
        """True when one more discard would move to the next layer (the L3 tier runs on the best before that)."""
        return self.discards + 1 >= self.discards_per_layer

    def record(self, kept: bool) -> bool:
        """Count a decision; return True when it moved the tracker to the next layer."""
        if kept:
            self.discards = 0
            return False
        self.discards += 1
        if self.discards >= self.discards_per_layer:
            self.position += 1
            if self.cycle and self.position >= len(self.layers):
                self.position = 0
            self.discards = 0
            return True
        return False
