"""Gates decide whether a candidate is kept. One registry (``GATES``) by name."""

from assay.gates import backpressure, paired, ratchet, trend
from assay.gates.base import GATES, Dimension, Gate, GateDecision, GateInput

__all__ = ["GATES", "Dimension", "Gate", "GateDecision", "GateInput"]
del backpressure, paired, ratchet, trend
