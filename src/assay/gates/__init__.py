"""Gates decide whether a candidate is kept. One registry (``GATES``) by name."""

from assay.gates import backpressure, ratchet, trend
from assay.gates.base import GATES, Dimension, Gate, GateDecision, GateInput

__all__ = ["GATES", "Dimension", "Gate", "GateDecision", "GateInput"]
del backpressure, ratchet, trend
